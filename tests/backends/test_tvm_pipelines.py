"""TVM's two pipelines really differ: `default` folds and fuses, `default_build` does neither (the
optlevel oracle compares them), on llvm as on CUDA (where both keep the dlight schedules). The compiled
models run in a contained worker (tests/contained.py): a native crash of TVM fails one test, not the run."""
import numpy as np
import pytest
from contained import contained  # noqa: F401 - the fixture

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
@pytest.mark.slow
def test_both_pipelines_compute_the_model(contained, pipeline):
    contained(pipeline_computes_the_model, pipeline)


def pipeline_computes_the_model(pipeline):
    b = get_backend("tvm-cpu", pipeline=pipeline)
    x = np.array([-1, 0, 1, 2], np.float32)
    out = b.run(b.compile(_model().SerializeToString()), {"x": x})
    np.testing.assert_array_equal(out["y"], np.maximum(x + x, 0))


@pytest.mark.slow
def test_an_output_computed_from_shapes_comes_back_as_its_values(contained):
    contained(output_computed_from_shapes_comes_back_as_its_values)


def output_computed_from_shapes_comes_back_as_its_values():
    """The frontend folds a tensor computed from shapes into a shape or PrimValue; the backend returns
    it as the array the model declares (a metamorphic run once crashed in nnfuzz on such an output)."""
    i64, f = TensorProto.INT64, TensorProto.FLOAT
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "i"], ["d"], axis=0),
             helper.make_node("Mul", ["d", "k"], ["y"]),
             helper.make_node("Identity", ["x"], ["x2"])]
    outs = [helper.make_tensor_value_info("y", i64, []), helper.make_tensor_value_info("x2", f, [3, 5])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", f, [3, 5])], outs,
                          initializer=[helper.make_tensor("i", i64, [], [1]), helper.make_tensor("k", i64, [], [4])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    b = get_backend("tvm-cpu")
    out = b.run(b.compile(model.SerializeToString()), {"x": np.zeros((3, 5), np.float32)})
    assert out["y"].dtype == np.int64 and out["y"].tolist() == 20, out
