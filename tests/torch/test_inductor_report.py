"""`nnfuzz repro --report` on an inductor bug: the standalone script (a torch.export program packed in it,
numpy and torch only) reproduces on its own, and report.md follows PyTorch's bug form."""
import ast
import subprocess
import sys

import numpy as np
import pytest

from nnfuzz.cli import main
from nnfuzz.generate import GenPolicy, generate_graph
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.portable import pack
from nnfuzz.triage.bugstore import BugStore
from nnfuzz.triage.meta import BugMeta

pytest.importorskip("torch._inductor")
ALLOWED = {"base64", "io", "ml_dtypes", "numpy", "torch"}


def _bug(tmp_path, corrupt):
    gir = generate_graph(GenPolicy(max_nodes=2, dtypes=["bfloat16"], include=["Relu", "Neg"]), seed=5)
    model = build_model(gir, 5, export=False)
    oracle = model.oracle.to_dict()
    if corrupt:  # a reference the real outputs disagree with
        oracle["output"] = {k: (v.astype(np.float32) + 1).astype(v.dtype) for k, v in oracle["output"].items()}
    oracle["output_f64"] = oracle["output_f64_jitter"] = None
    meta = BugMeta(system="inductor-cpu", version="x", symptom="inconsistency", version_id="x", stage="verify",
                   summary="test bug", format="gir", ops=[i.op.name for i in gir.insts])
    return BugStore(tmp_path / "bugs").save(model_bytes=pack(gir.dumps(), model.weights), gir_text=gir.dumps(),
                                            oracle=oracle, meta=meta, err_log="test")


def _imports(text):
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("corrupt", [True, False], ids=["wrong-reference", "exact-reference"])
def test_inductor_script_runs_alone_and_report_uses_pytorchs_form(tmp_path, corrupt):
    bug = _bug(tmp_path, corrupt)
    assert main(["repro", str(bug), "--report"]) == 0
    text = (bug / "repro_inductor-cpu.py").read_text()
    assert _imports(text) <= ALLOWED, _imports(text)
    assert "PROGRAM = base64.b64decode(" in text and "#   def forward(" in text
    r = subprocess.run([sys.executable, "-I", "-c", text], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    if corrupt:
        assert r.returncode != 0 and "AssertionError" in r.stderr, r.stdout + r.stderr[-2000:]
    else:  # bfloat16 outputs are compared, within bfloat16's tolerance, and match
        assert r.returncode == 0 and "not reproduced" in r.stdout, r.stderr[-2000:]
    report = (bug / "report.md").read_text()
    assert "### 🐛 Describe the bug" in report and "### Versions" in report and text.strip() in report
