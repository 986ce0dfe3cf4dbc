"""A kept bug's repro script and report.md, written in this process (the fast tier's cover of
triage/script.py, script_torch.py and report_md.py; running the scripts is the slow tier's, in
tests/fuzz/test_repro.py and tests/torch/test_inductor_report.py): each is valid Python, runs the system
it names, and sits in that system's tracker template with the bug's own summary."""
from pathlib import Path

import pytest

from nnfuzz.triage.bugstore import load_bug
from nnfuzz.triage.report_md import write_report
from nnfuzz.triage.script import write_script
from nnfuzz.verdict import DEFAULT_TOLERANCES

BUGS = Path(__file__).parents[2] / "bugs" / "kept"


@pytest.mark.parametrize("folder, system, runs, heading", [
    ("0000", "ort-cpu", "onnxruntime", "### Describe the issue"),          # an ONNX model: ORT's template
    ("0017", "inductor-cpu", "torch.compile", "### 🐛 Describe the bug"),  # a GraphIR one: PyTorch's
])
def test_a_kept_bugs_script_and_report_are_written_here(folder, system, runs, heading):
    bug = load_bug(BUGS / folder)
    script = write_script(bug, system, dict(DEFAULT_TOLERANCES))
    compile(script, f"repro_{system}.py", "exec")  # a SyntaxError fails the test
    assert runs in script
    report = write_report(bug, system, script)
    assert heading in report.splitlines() and script in report
    assert bug.meta.summary[:40] in report


def test_the_ops_command_lists_a_named_op(capsys):
    from nnfuzz.cli import main

    assert main(["ops", "mgen.include=[Conv2d]", "ui=plain"]) == 0
    out = capsys.readouterr().out
    assert "Conv2d" in out and "stride_h" in out and "Relu" not in out
