"""Bug stores for the report's tests (a module of its own name: each test folder's conftest is a module
named conftest, so tests import helpers from here): copies of real kept bugs (bugs/kept/ in the repository),
and a hostile store whose folders and log lines are broken or carry markup that must stay text."""
import json
import shutil
from pathlib import Path

import pytest

KEPT = Path(__file__).resolve().parents[2] / "bugs" / "kept"
PWN = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'


def copy_bugs(dest: Path, ids) -> Path:
    """Kept bugs ``ids`` copied into ``dest`` as 0000, 0001, ... (numbered without gaps, as a store is)."""
    dest.mkdir(parents=True, exist_ok=True)
    for k, i in enumerate(ids):
        shutil.copytree(KEPT / i, dest / f"{k:04d}")
    return dest


@pytest.fixture
def hostile_store(tmp_path):
    """0000: a real bug whose err.log, summary and graph carry markup; 0001: meta.json not JSON;
    0002: meta.json with a malformed field; 0003: a real bug with a gir.json that is no graph, a model.onnx
    that is no model and no saved script; campaign.jsonl: 1 good record and 5 broken lines."""
    root = copy_bugs(tmp_path / "hostile", ["0000", "0001", "0002", "0005"])
    (root / "0000" / "err.log").write_text(PWN)
    meta = json.loads((root / "0000" / "meta.json").read_text())
    (root / "0000" / "meta.json").write_text(json.dumps({**meta, "summary": "</pre>" + PWN}))
    gir = json.loads((root / "0000" / "gir.json").read_text())
    gir["insts"][0]["op"]["op"] = PWN
    (root / "0000" / "gir.json").write_text(json.dumps(gir))
    (root / "0001" / "meta.json").write_text("{oops")
    meta = json.loads((root / "0002" / "meta.json").read_text())
    (root / "0002" / "meta.json").write_text(json.dumps({**meta, "symptom": "inconsistency",
                                                         "first_divergent_node": "not a node"}))
    (root / "0003" / "gir.json").write_text("[1, 2]")
    (root / "0003" / "model.onnx").write_bytes(b"not a model")
    for f in (root / "0003").glob("repro_*.py"):
        f.unlink()
    lines = [json.dumps({"campaign": {"seed": 1, "backend": "ort-cpu" + PWN}, "t": 0.1}),
             json.dumps({"seed": 1, "ops": ["Log", "Add"], "verdict": "inconsistency", "seconds": {"generate": 0.5},
                         "bug": str(root / "0000"), "t": 1.5}),
             "not json",
             "[1]",
             json.dumps({"seed": 2, "verdict": "pass", "t": "soon"}),
             json.dumps({"seed": 3, "verdict": "pass", "seconds": {"x": "y"}, "t": 2.0}),
             "[" * 100000 + "]" * 100000]
    (root / "campaign.jsonl").write_text("\n".join(lines) + "\n")
    return root
