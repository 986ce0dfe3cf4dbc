"""`nnfuzz repro --report` on a bug of a TF system: the standalone script (the SavedModel packed in it,
numpy and tensorflow only) reproduces on its own, and report.md follows TensorFlow's bug form."""
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

pytest.importorskip("tensorflow")
ALLOWED = {"base64", "io", "tarfile", "tempfile", "ml_dtypes", "numpy", "tensorflow", "ai_edge_litert"}


def _gir_bug(tmp_path, system, dtype="float32", corrupt=True):
    """A folder as a campaign saves it for ``system`` (model.gir, no model/ folder: the script writes the
    SavedModel itself), its recorded reference off by one (``corrupt``) or exact."""
    gir = generate_graph(GenPolicy(max_nodes=2, dtypes=[dtype], include=["Relu", "Neg"]), seed=5)
    model = build_model(gir, 5, export=False)
    oracle = model.oracle.to_dict()
    if corrupt:
        oracle["output"] = {k: (v.astype(np.float32) + 1).astype(v.dtype) for k, v in oracle["output"].items()}
    oracle["output_f64"] = oracle["output_f64_jitter"] = None
    meta = BugMeta(system=system, version="x", symptom="inconsistency", version_id="x", stage="verify",
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


@pytest.mark.parametrize("system", ["xla-cpu", "tflite-cpu"])
def test_tf_script_reproduces_alone_and_report_uses_tensorflows_form(tmp_path, system):
    bug = _gir_bug(tmp_path, system)
    assert main(["repro", str(bug), "--report"]) == 0
    text = (bug / f"repro_{system}.py").read_text()
    assert _imports(text) <= ALLOWED, _imports(text)
    assert "SAVED_MODEL = base64.b64decode(" in text and "INPUTS = {\n    '" in text
    r = subprocess.run([sys.executable, "-I", "-c", text], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode != 0 and "AssertionError" in r.stderr, r.stdout + r.stderr[-2000:]
    report = (bug / "report.md").read_text()
    for heading in ("### Issue type", "### TensorFlow version", "### Current behavior?",
                    "### Standalone code to reproduce the issue", "### Relevant log output"):
        assert heading in report
    assert text.strip() in report and "= Relu(" in report or "= Neg(" in report


def test_tf_script_of_an_exact_reference_says_not_reproduced_and_compares_bfloat16_with_tolerance(tmp_path):
    """bfloat16 outputs (numpy kind 'V') are compared within bfloat16's tolerance, not bit for bit."""
    bug = _gir_bug(tmp_path, "xla-cpu", dtype="bfloat16", corrupt=False)
    assert main(["repro", str(bug), "--script"]) == 0
    text = (bug / "repro_xla-cpu.py").read_text()
    assert "RTOL, ATOL = 0.05, 0.05" in text
    r = subprocess.run([sys.executable, "-I", "-c", text], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0 and "not reproduced" in r.stdout, r.stderr[-2000:]
