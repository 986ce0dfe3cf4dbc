"""ONNX Runtime's own 'not implemented' answers are known limitations (UNSUPPORTED), read from real ORT."""
import pytest

from nnfuzz.backends.known import classify

ort = pytest.importorskip("onnxruntime")


def test_an_op_ort_does_not_implement_is_unsupported():
    """A migrated ONNX test of an ai.onnx.preview op (FlexAttention) was saved as an ORT crash."""
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node("FlexAttention", ["x"], ["y"], domain="ai.onnx.preview")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.preview", 1)])
    with pytest.raises(Exception) as e:
        ort.InferenceSession(m.SerializeToString())
    k = classify("ort", str(e.value))
    assert k is not None and k.kind == "unsupported", str(e.value)
