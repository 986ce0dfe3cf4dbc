"""A real fault that a dynamic test finds but a repeated inference causes (tests/cases/openvino-dynamic-stale-int16,
bugs/kept/0085): OpenVINO 2026.4.1's CPU plugin computes an int16 Unsqueeze-Relu6-ReverseSequence-Mul chain
right on a compiled model's first inference and wrong (8/14 values) on every later one, static or dynamic.
The folder is the 10-node graph an openvino-cpu campaign saved. The static check infers the static model of
the failing shape (1) twice, as the dynamic compile was, and its second inference fails too: the signature is
``again | GatherElements`` (the plugin's lowering of ReverseSequence, found by the fusion cut), not
``dynamic``. Its replay, its standalone script, and its reduction keep the shape family and that signature."""
import json
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
SIGNATURE = "openvino-cpu | inconsistency | again | GatherElements | values"
AGAIN = "fails when inferred again (inconsistency)"


@pytest.fixture
def bug(tmp_path):
    pytest.importorskip("openvino")
    dest = tmp_path / "bugs" / "0000"
    shutil.copytree(CASE, dest)
    return dest


def _dim_params(path) -> set:
    return _dim_params_of((path / "model.onnx").read_bytes())


def _dim_params_of(model_bytes: bytes) -> set:
    graph = onnx.load_model_from_string(model_bytes).graph
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
    assert _dim_params(bug) and after.meta.dynamic["static"] == AGAIN
    assert len(after.oracle["shapes"]) == len(before.dynamic["assignments"])
    assert main(["repro", str(bug)]) == 0


def test_the_static_model_of_the_failing_shape_fails_when_inferred_as_often_as_the_dynamic_one(bug):
    """The static check compares like with like: shape 1's static model inferred once is right, inferred
    twice (as the dynamic compile was when it failed at shape 1) its last inference is wrong."""
    import dataclasses

    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.gir import GraphIR, ShapeFamily
    from nnfuzz.materialize.dynamic import at_shape
    from nnfuzz.triage.static_check import STATIC_PASSES, static_check
    from nnfuzz.verdict import DEFAULT_TOLERANCES, judge

    case = load_bug(bug)
    gir = dataclasses.replace(GraphIR.loads(case.gir_text), family=ShapeFamily.from_json(case.meta.dynamic)).at(1)
    static, shape = at_shape(case.model_bytes, gir), case.oracle["shapes"][1]
    assert not _dim_params_of(static)
    with Sandbox("openvino-cpu", case.meta.backend_options, test_timeout=120) as sb:
        def check(k):
            return static_check(sb.run, static, shape["input"], k,
                                lambda r: judge(r, shape["output"], "openvino", DEFAULT_TOLERANCES))
        assert check(0) == STATIC_PASSES  # one inference, as a static test makes: right
        assert check(1) == AGAIN  # two, as the dynamic compile had made at shape 1: the second is wrong


def test_a_recheck_re_signs_the_label_the_campaign_gave_it(bug, tmp_path):
    """As the campaign saved it (before the static check inferred as often), the folder said the static
    model passes and signed it ``dynamic``; ``nnfuzz dedup --recheck`` makes the static check again."""
    meta = json.loads((bug / "meta.json").read_text())
    meta["dynamic"]["static"] = "passes"
    meta["signature"] = SIGNATURE.replace("| again |", "| dynamic |")
    (bug / "meta.json").write_text(json.dumps(meta, indent=1))
    assert main(["repro", str(bug)]) != 0  # the label recorded is not today's: fails differently
    assert main(["dedup", str(bug.parent), "--recheck"]) == 0
    after = load_bug(bug).meta
    assert after.dynamic["static"] == AGAIN and after.signature == SIGNATURE
