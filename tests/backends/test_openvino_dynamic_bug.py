"""A real fault only a dynamic model shows (tests/cases/openvino-dynamic-stale-int16): OpenVINO 2026.4.1's CPU
plugin computes an int16 Unsqueeze-Relu6-ReverseSequence-Mul chain right on the first run of a model with a
dim_param input, and wrong (8/14 values) on every later run of that compiled model; compiled static, each
shape is right. The folder is the 10-node graph an openvino-cpu campaign saved. Its replay, its standalone
script, and its reduction keep the shape family and the signature ``dynamic | GatherElements`` (the
plugin's lowering of ReverseSequence, found by the fusion cut)."""
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from nnfuzz.cli import main
from nnfuzz.triage.bugstore import load_bug

pytestmark = pytest.mark.slow
CASE = Path(__file__).parents[1] / "cases" / "openvino-dynamic-stale-int16"
SIGNATURE = "openvino-cpu | inconsistency | dynamic | GatherElements | values"


@pytest.fixture
def bug(tmp_path):
    pytest.importorskip("openvino")
    dest = tmp_path / "bugs" / "0000"
    shutil.copytree(CASE, dest)
    return dest


def _dim_params(path) -> set:
    graph = onnx.load(str(path / "model.onnx")).graph
    return {d.dim_param for i in graph.input for d in i.type.tensor_type.shape.dim if d.dim_param}


def test_the_replay_and_the_script_show_it_from_the_second_shape_on(bug, tmp_path):
    assert load_bug(bug).meta.signature == SIGNATURE
    assert main(["repro", str(bug)]) == 0  # reproduces, localized again to the same op
    assert main(["repro", str(bug), "--script"]) == 0
    r = subprocess.run([sys.executable, "-I", str(bug / "repro_openvino-cpu.py")], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    lines = r.stdout.splitlines()
    assert r.returncode == 1 and lines[0].endswith(": outputs match"), r.stdout + r.stderr
    assert all(x.endswith(": outputs differ") for x in lines[1:4]) and lines[4].startswith("reproduced:"), r.stdout


def test_its_reduction_keeps_the_symbolic_dims_and_the_signature(bug):
    before = load_bug(bug).meta
    assert main(["reduce", str(bug), "reduce_s=120"]) == 0
    after = load_bug(bug)
    assert after.meta.reduced["nodes_after"] < before.nodes and after.meta.signature == SIGNATURE
    assert _dim_params(bug) and after.meta.dynamic["static"] == "passes"
    assert len(after.oracle["shapes"]) == len(before.dynamic["assignments"])
    assert main(["repro", str(bug)]) == 0
