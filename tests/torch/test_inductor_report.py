"""`nnfuzz repro --report` on an inductor bug: the standalone script (a torch.export program packed in it,
numpy and torch only) reproduces on its own, and report.md follows PyTorch's bug form."""
import subprocess
import sys

import pytest
from report_helpers import gir_bug, imports_of

from nnfuzz.cli import main

pytest.importorskip("torch._inductor")
ALLOWED = {"base64", "io", "ml_dtypes", "numpy", "torch"}


@pytest.mark.parametrize("corrupt", [True, False], ids=["wrong-reference", "exact-reference"])
@pytest.mark.slow
def test_inductor_script_runs_alone_and_report_uses_pytorchs_form(tmp_path, corrupt):
    bug = gir_bug(tmp_path, "inductor-cpu", "bfloat16", corrupt)
    assert main(["repro", str(bug), "--report"]) == 0
    text = (bug / "repro_inductor-cpu.py").read_text()
    assert imports_of(text) <= ALLOWED, imports_of(text)
    assert "PROGRAM = base64.b64decode(" in text and "#   def forward(" in text
    r = subprocess.run([sys.executable, "-I", "-c", text], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    if corrupt:
        assert r.returncode == 1 and r.stdout.startswith("reproduced:"), r.stdout + r.stderr[-2000:]
    else:  # bfloat16 outputs are compared, within bfloat16's tolerance, and match
        assert r.returncode == 0 and "not reproduced" in r.stdout, r.stderr[-2000:]
    report = (bug / "report.md").read_text()
    assert "### 🐛 Describe the bug" in report and "### Versions" in report and text.strip() in report
