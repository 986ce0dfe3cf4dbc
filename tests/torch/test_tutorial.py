"""Runs docs/adding-an-operator.md: its code blocks become a user module that nnfuzz then fuzzes."""
import json
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).parents[2] / "docs" / "adding-an-operator.md"


def test_tutorial_op_is_fuzzed_without_touching_nnfuzz(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 2, "the tutorial has the op block and the lowering block"
    (tmp_path / "my_ops.py").write_text("\n".join(blocks))
    out = tmp_path / "crop_models"
    cmd = [sys.executable, "-m", "nnfuzz.cli", "generate", "n=6", "ui=plain", f"out={out}",
           "mgen.include_modules=[my_ops]", "mgen.include=[CropLast,elementwise]", "mgen.op_weights={CropLast:5}"]
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    folders = sorted(out.iterdir())
    assert len(folders) == 6
    ops = [op for f in folders for op in json.loads((f / "meta.json").read_text())["ops"]]
    assert "CropLast" in ops
    for f in folders:
        assert {p.name for p in f.iterdir()} == {"model.onnx", "gir.json", "oracle.pkl", "meta.json"}
    r = subprocess.run([sys.executable, "-m", "nnfuzz.cli", "ops", "mgen.include_modules=[my_ops]",
                        "mgen.include=[CropLast]"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
    assert r.returncode == 0 and "CropLast" in r.stdout, r.stderr
