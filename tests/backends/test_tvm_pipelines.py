"""TVM's two pipelines really differ: `default` folds and fuses, `default_build` does neither (the
optlevel oracle compares them), on llvm as on CUDA (where both keep the dlight schedules)."""
import numpy as np
import pytest

tvm = pytest.importorskip("tvm")
from onnx import TensorProto, helper  # noqa: E402
from tvm.relax.frontend.onnx import from_onnx  # noqa: E402

from nnfuzz.backends import get_backend  # noqa: E402
from nnfuzz.backends.tvm import relax_pipeline  # noqa: E402


def _model():
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Add", ["x", "x"], ["a"]), helper.make_node("Relu", ["a"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", f, [4])],
                          [helper.make_tensor_value_info("y", f, [4])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("kind", ["llvm", "cuda"])
def test_default_fuses_and_default_build_does_not(kind):
    target = tvm.target.Target(kind)
    mod = from_onnx(_model())
    fused = {}
    for name in ("default", "default_build"):
        with target:
            out = relax_pipeline(name, target)(mod)
        fused[name] = sorted(gv.name_hint for gv in out.functions if gv.name_hint.startswith("fused_"))
    assert fused == {"default": ["fused_add_relu"], "default_build": []}


@pytest.mark.parametrize("pipeline", ["default", "default_build"])
def test_both_pipelines_compute_the_model(pipeline):
    b = get_backend("tvm-cpu", pipeline=pipeline)
    x = np.array([-1, 0, 1, 2], np.float32)
    out = b.run(b.compile(_model().SerializeToString()), {"x": x})
    np.testing.assert_array_equal(out["y"], np.maximum(x + x, 0))
