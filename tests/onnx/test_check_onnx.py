"""check_onnx (materialize/onnx/export.py) rejects what the full checker rejects: a graph error the
checker finds, a type error only strict shape inference finds, and outputs that disagree with
type_transfer. A model it lets through reaches the system under test, so each must be an error."""
import pytest
from onnx import TensorProto, helper

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import OpDefinitionError
from nnfuzz.materialize.onnx.export import check_onnx


def _model(nodes, inputs, out_type=TensorProto.FLOAT, out_shape=(2,)):
    ins = [helper.make_tensor_value_info(n, t, [2]) for n, t in inputs]
    out = helper.make_tensor_value_info("y", out_type, list(out_shape))
    g = helper.make_graph(nodes, "t", ins, [out])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


F32 = [AbsTensor([2], DType.float32)]


def test_a_valid_model_passes_and_comes_back_shape_inferred():
    m = _model([helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Neg", ["t"], ["y"])], [("x", 1)])
    inferred = check_onnx(m, F32, ["y"])
    assert "t" in {v.name for v in inferred.graph.value_info}


def test_a_graph_error_the_checker_finds_is_rejected():
    m = _model([helper.make_node("Relu", ["nowhere"], ["y"])], [("x", 1)])
    with pytest.raises(OpDefinitionError, match="checker rejects"):
        check_onnx(m, F32, ["y"])


def test_a_type_error_only_strict_inference_finds_is_rejected():
    m = _model([helper.make_node("Add", ["x", "z"], ["y"])], [("x", TensorProto.FLOAT), ("z", TensorProto.INT64)])
    with pytest.raises(OpDefinitionError, match="checker rejects"):
        check_onnx(m, F32, ["y"])


def test_outputs_that_disagree_with_type_transfer_are_rejected():
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", 1)])
    with pytest.raises(OpDefinitionError, match="shape"):
        check_onnx(m, [AbsTensor([3], DType.float32)], ["y"])
    with pytest.raises(OpDefinitionError, match="dtype"):
        check_onnx(m, [AbsTensor([2], DType.float64)], ["y"])
