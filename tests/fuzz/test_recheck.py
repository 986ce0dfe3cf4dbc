"""`nnfuzz dedup STORE --recheck` re-signs folders saved by an earlier nnfuzz with today's root cause, on
their own system (real ONNX Runtime)."""
import json
import shutil
from pathlib import Path

import pytest

from nnfuzz.cli import main

KEPT = Path(__file__).parents[2] / "bugs" / "kept"
OLD = ("root_cause", "signature", "recheck")


def as_saved_before_root_causes(src: Path, dst: Path, first_divergent: dict) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("original", "report.md", "repro_*"))
    meta = json.loads((dst / "meta.json").read_text())
    for k in OLD:
        meta.pop(k, None)
    meta.update(schema=5, first_divergent_node=first_divergent)
    (dst / "meta.json").write_text(json.dumps(meta))


@pytest.mark.slow  # starts an ONNX Runtime sandbox
def test_recheck_gives_one_fault_grown_downstream_one_signature(tmp_path, capsys):
    """bugs/kept/0000 (ORT's float64 Shrink) twice, as an earlier nnfuzz would have signed it after a Log and a
    Div downstream: two "new unique" signatures before, one after, named after the Shrink."""
    store = tmp_path / "bugs"
    store.mkdir()
    for k, op in enumerate(("Log", "Div")):
        as_saved_before_root_causes(KEPT / "0000", store / f"{k:04d}",
                                    {"index": 1, "op": f"{op}()", "var": "v1", "dtype": "float64"})
    assert main(["dedup", "--json", str(store)]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["unique"] == 2
    assert main(["dedup", "--json", str(store), "--recheck"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["unique"] == 1 and out["recheck"] == {"reproduces": 2}, out
    index = json.loads((store / "index.json").read_text())
    assert [g["signature"] for g in index["groups"]] == ["ort-cpu | inconsistency | Shrink | precision"]
    meta = json.loads((store / "0001" / "meta.json").read_text())
    assert meta["root_cause"]["kind"] == "precision" and meta["recheck"]["outcome"] == "reproduces"


def test_recheck_is_a_flag_of_dedup_only(tmp_path, capsys):
    (tmp_path / "0000").mkdir()
    assert main(["dedup", str(tmp_path), "--rechek"]) == 2
    assert "--recheck" in capsys.readouterr().err
