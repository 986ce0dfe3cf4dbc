"""The ReferenceEvaluator fixes of onnx_reference_fixes.py for GatherElements and OneHot are still
needed (the stock operator fails on the valid model) and right (they agree with ONNX Runtime). When
onnx fixes one, the first assertion fails: drop that fix."""
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_reference_fixes import REFERENCE_FIXES

onnx_ref = pytest.importorskip("onnx.reference")
ort = pytest.importorskip("onnxruntime")


def _model(node, inputs, output):
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                          [helper.make_tensor_value_info(*output)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


CASES = {
    "GatherElements negative axis": (
        _model(helper.make_node("GatherElements", ["x", "i"], ["y"], axis=-1),
               [("x", TensorProto.FLOAT, [2, 3]), ("i", TensorProto.INT64, [2, 2])], ("y", TensorProto.FLOAT, [2, 2])),
        {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "i": np.array([[0, -1], [1, 1]], np.int64)}),
    "GatherElements over 64 entries": (
        _model(helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1),
               [("x", TensorProto.FLOAT, [2, 70, 2]), ("i", TensorProto.INT64, [2, 3, 2])],
               ("y", TensorProto.FLOAT, [2, 3, 2])),
        {"x": np.arange(280, dtype=np.float32).reshape(2, 70, 2), "i": np.full((2, 3, 2), 69, np.int64)}),
    "OneHot 1-element depth": (
        _model(helper.make_node("OneHot", ["i", "d", "v"], ["y"]),
               [("i", TensorProto.INT64, [3]), ("d", TensorProto.INT64, [1]), ("v", TensorProto.FLOAT, [2])],
               ("y", TensorProto.FLOAT, [3, 4])),
        {"i": np.array([0, 3, -1], np.int64), "d": np.array([4], np.int64), "v": np.array([0, 1], np.float32)}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_stand_in_needed_and_right(case):
    model, feed = CASES[case]
    with pytest.raises((ValueError, TypeError)):
        onnx_ref.ReferenceEvaluator(model).run(None, feed)
    (got,) = onnx_ref.ReferenceEvaluator(model, new_ops=REFERENCE_FIXES).run(None, feed)
    (want,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feed)
    np.testing.assert_array_equal(got, want)
