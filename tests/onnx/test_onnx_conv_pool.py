"""onnx's ReferenceEvaluator departs from the ONNX spec on four spellings the conv, pool and resize
lowerings write (see tests/onnx_reference_fixes.py). Each test shows the stock evaluator failing on a one-node
model and the corrected one agreeing with the numpy reference of the op the node lowers (and with
ONNX Runtime), so the corrections can stand in for the stock classes in test_direct_lowering."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper
from onnx import TensorProto as T
from onnx.reference import ReferenceEvaluator
from onnx_reference_fixes import REFERENCE_FIXES

from nnfuzz.ops.conv import spec as C
from nnfuzz.ops.pool import spec as P
from nnfuzz.reference import eval_op


def _model(op_type, inputs, attrs, opset=18, consts=()):
    """A one-node model over float32 ``inputs`` ({name: shape}) and int64 initializers ``consts``
    ([(name, values)], given as Resize's sizes)."""
    inits = [helper.make_tensor(n, T.INT64, [len(v)], v) for n, v in consts]
    gap = ["", ""] if consts else []  # Resize: roi and scales omitted before sizes
    node = helper.make_node(op_type, list(inputs) + gap + [n for n, _ in consts], ["y"], **attrs)
    graph = helper.make_graph([node], "t", [helper.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs.items()],
                              [helper.make_tensor_value_info("y", T.FLOAT, None)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _ort(model, feed):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feed)[0]


def _fixed(model, feed):
    return ReferenceEvaluator(model, new_ops=REFERENCE_FIXES).run(None, feed)[0]


@pytest.fixture
def rng():
    """Each test its own generator: a module-wide one gave a test other inputs whenever pytest-xdist sent
    the module's earlier tests to another worker (a near-zero output then failed rtol 1e-6)."""
    return np.random.default_rng(0)


def test_conv_transpose_with_groups(rng):
    x, w = rng.standard_normal((1, 4, 3)).astype(np.float32), rng.standard_normal((4, 3, 2)).astype(np.float32)
    model = _model("ConvTranspose", {"x": x.shape, "w": w.shape}, {"group": 2, "strides": [2]})
    with pytest.raises(ValueError, match="cannot reshape"):
        ReferenceEvaluator(model).run(None, {"x": x, "w": w})
    (want,) = eval_op(C.ConvTranspose1d(2, 0, 0, 1, 2), x, w)
    np.testing.assert_allclose(_fixed(model, {"x": x, "w": w}), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_ort(model, {"x": x, "w": w}), want, rtol=1e-5, atol=1e-6)


def test_global_max_pool_of_3d_and_5d_input(rng):
    for shape in [(2, 3, 5), (1, 2, 3, 2, 4)]:
        x = rng.standard_normal(shape).astype(np.float32)
        model = _model("GlobalMaxPool", {"x": shape}, {})
        stock = ReferenceEvaluator(model).run(None, {"x": x})[0]
        assert stock.shape != (shape[0], shape[1]) + (1,) * (len(shape) - 2)
        (want,) = eval_op(P.GlobalMaxPool(), x)
        np.testing.assert_array_equal(_fixed(model, {"x": x}), want)
        np.testing.assert_array_equal(_ort(model, {"x": x}), want)


def test_max_pool_same_lower_with_a_stride(rng):
    # size 11, kernel 3, stride 4: SAME gives ceil(11/4) = 3 outputs and total padding 2*4 + 3 - 11 = 0,
    # which is MaxPool1d(kernel 3, stride 4, pad 0); the stock evaluator makes floor(11/4) = 2
    x = rng.standard_normal((1, 2, 11)).astype(np.float32)
    model = _model("MaxPool", {"x": x.shape}, {"kernel_shape": [3], "strides": [4], "auto_pad": "SAME_LOWER"})
    assert ReferenceEvaluator(model).run(None, {"x": x})[0].shape == (1, 2, 2)
    (want,) = eval_op(P.MaxPool1d(3, 4, 0, 1), x)
    np.testing.assert_array_equal(_fixed(model, {"x": x}), want)
    np.testing.assert_array_equal(_ort(model, {"x": x}), want)


def test_resize_with_negative_axes(rng):
    x = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    neg = _model("Resize", {"x": x.shape}, {"axes": [-2, -1], "mode": "linear"}, consts=[("sizes", [6, 2])])
    pos = _model("Resize", {"x": x.shape}, {"axes": [2, 3], "mode": "linear"}, consts=[("sizes", [6, 2])])
    with pytest.raises(ValueError, match="axes don't match"):
        ReferenceEvaluator(neg).run(None, {"x": x})
    want = ReferenceEvaluator(pos).run(None, {"x": x})[0]
    assert want.shape == (1, 2, 6, 2)
    np.testing.assert_array_equal(_fixed(neg, {"x": x}), want)
    np.testing.assert_allclose(_ort(neg, {"x": x}), want, rtol=1e-6)
