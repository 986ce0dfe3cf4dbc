"""`nnfuzz repro --report` on a bug of a TF system: the standalone script (the SavedModel packed in it,
numpy and tensorflow only) reproduces on its own, and report.md follows TensorFlow's bug form."""
import subprocess
import sys

import pytest
from report_helpers import gir_bug, imports_of

from nnfuzz.cli import main

pytest.importorskip("tensorflow")
ALLOWED = {"base64", "io", "tarfile", "tempfile", "ml_dtypes", "numpy", "tensorflow", "ai_edge_litert"}


@pytest.mark.slow
@pytest.mark.parametrize("system", ["xla-cpu", "tflite-cpu"])
def test_tf_script_reproduces_alone_and_report_uses_tensorflows_form(tmp_path, system):
    bug = gir_bug(tmp_path, system)
    assert main(["repro", str(bug), "--report"]) == 0
    text = (bug / f"repro_{system}.py").read_text()
    assert imports_of(text) <= ALLOWED, imports_of(text)
    assert "SAVED_MODEL = base64.b64decode(" in text and "INPUTS = {\n    '" in text
    r = subprocess.run([sys.executable, "-I", "-c", text], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 1 and "reproduced:" in r.stdout, r.stdout + r.stderr[-2000:]
    report = (bug / "report.md").read_text()
    for heading in ("### Issue type", "### TensorFlow version", "### Current behavior?",
                    "### Standalone code to reproduce the issue", "### Relevant log output"):
        assert heading in report
    assert text.strip() in report and "= Relu(" in report or "= Neg(" in report


@pytest.mark.slow
def test_tf_script_of_an_exact_reference_says_not_reproduced_and_compares_bfloat16_with_tolerance(tmp_path):
    """bfloat16 outputs (numpy kind 'V') are compared within bfloat16's tolerance, not bit for bit."""
    bug = gir_bug(tmp_path, "xla-cpu", dtype="bfloat16", corrupt=False)
    assert main(["repro", str(bug), "--script"]) == 0
    text = (bug / "repro_xla-cpu.py").read_text()
    assert "RTOL, ATOL = 0.05, 0.05" in text
    r = subprocess.run([sys.executable, "-I", "-c", text], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0 and "not reproduced" in r.stdout, r.stderr[-2000:]
