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


# ort-gpu 1.31.1 on an H100, a float64 Tan (no CUDA and no CPU kernel): the session's own words. ort-gpu saved
# 2695 of a 150 s campaign's 8201 tests as crashes under this one message before it was known.
ORT_GPU_NO_KERNEL = ("[ONNXRuntimeError] : 1 : FAIL : Exception during initialization: /onnxruntime_src/onnxruntime/"
                     "core/optimizer/transformer_memcpy.cc:253 bool onnxruntime::TransformerMemcpyImpl::"
                     "IsNodeCompatibleWithProvider(const onnxruntime::Node&) const !node_provider_type.empty() was "
                     "false. Provider type for Tan node with name 'Tan_10' is not set.")


def test_a_gpu_session_without_a_kernel_anywhere_is_unsupported():
    """The same op x dtype on ort-cpu is 'Could not find an implementation' (checked here on the real CPU
    session); in a CUDA session ORT says it as above (tests/backends/test_gpu_backends.py checks it live)."""
    from onnx import TensorProto, helper

    d = TensorProto.DOUBLE
    g = helper.make_graph([helper.make_node("Tan", ["x"], ["y"], name="Tan_10")], "g",
                          [helper.make_tensor_value_info("x", d, [2])], [helper.make_tensor_value_info("y", d, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)])
    with pytest.raises(Exception) as e:
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for text in (str(e.value), ORT_GPU_NO_KERNEL):
        k = classify("ort", text)
        assert k is not None and k.kind == "unsupported", text
    assert classify("ort", ORT_GPU_NO_KERNEL.replace("is not set", "is set")) is None
