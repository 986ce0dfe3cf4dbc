"""Runs docs/adding-an-operator.md: its code blocks become a user module that nnfuzz then fuzzes."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "adding-an-operator.md"
# as the console script runs: the working folder that holds my_ops.py is not on the import path (-P)
NNFUZZ = [sys.executable, "-P", "-m", "nnfuzz.cli"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.slow
def test_tutorial_op_is_fuzzed_without_touching_nnfuzz(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 3, "the tutorial has the op block and the torch and ONNX lowering blocks"
    (tmp_path / "my_ops.py").write_text("\n".join(blocks))
    out = tmp_path / "crop_models"
    cmd = [*NNFUZZ, "generate", "n=6", "ui=plain", f"out={out}",
           "mgen.include_modules=[my_ops]", "mgen.include=[CropLast,elementwise]", "mgen.op_weights={CropLast:5}",
           "mgen.seed=1"]  # a given seed: a drawn one once made six graphs without CropLast
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=ENV)
    assert r.returncode == 0, r.stderr
    folders = sorted(out.iterdir())
    assert len(folders) == 6
    ops = [op for f in folders for op in json.loads((f / "meta.json").read_text())["ops"]]
    assert "CropLast" in ops
    for f in folders:
        assert {p.name for p in f.iterdir()} == {"model.onnx", "gir.json", "oracle.pkl", "meta.json"}
        assert json.loads((f / "meta.json").read_text())["export"]["via"] == "onnx"
    r = subprocess.run([*NNFUZZ, "ops", "mgen.include_modules=[my_ops]", "mgen.include=[CropLast]"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120, env=ENV)
    assert r.returncode == 0 and "CropLast" in r.stdout, r.stderr
