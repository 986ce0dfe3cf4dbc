"""ONNX lowerings of the quantization ops: one node each, scales and zero points as constants
(initializers or Constant nodes, drawn by ``g.const``).

Drawn spellings: a zero point of 0 into uint8 omitted (the spec's default, which also fixes the output
type), or given; ``axis`` positive or negative; blocked quantization (``block_size``, opset 21+) with scale and
zero-point tensors of the blocked shape; at opset 21+ an omitted zero point with the
``output_dtype`` attribute naming the type; to float8, ``saturate=1`` (the default) written or omitted; the
optional zero points of MatMulInteger/ConvInteger
omitted when 0; ConvInteger/QLinearConv's attributes as Conv's (ops/conv/onnx.py).
"""
import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.conv.onnx import _common
from nnfuzz.ops.pool.onnx import pad_attrs
from nnfuzz.ops.quant import spec as Q

F32 = DType.float32


def _scale(g, op, x):
    values, shape = Q.scale_tensor(op.scale, op.axis, op.block_size, g.shape(x))
    return g.const(np.asarray(values, dtype=np.float32).reshape(shape), F32, "scale")


def _zero_point(g, op, x, dtype, optional: bool):
    """The zero-point input, of the scale's shape (None: omitted, which means 0 of uint8 or, at 21+, of
    ``output_dtype``)."""
    if optional and int(op.zero_point) == 0 and dtype is DType.uint8 and g.flip("zero_point", "omitted", "given"):
        return None
    shape = Q.scale_tensor(op.scale, op.axis, op.block_size, g.shape(x))[1]
    return g.const(np.full(shape, int(op.zero_point), dtype=dtype.numpy()), dtype, "zp")


def _axis_attr(g, op, x):
    """``axis`` (drawn positive or negative) and, for blocked quantization (opset 21+), ``block_size``."""
    if op.axis is None:
        return {}
    if op.block_size is None:
        return {"axis": g.axis(op.axis, g.rank(x))}
    g.need_opset(21, "blocked quantization (block_size)")
    return {"axis": g.axis(op.axis, g.rank(x)), "block_size": int(op.block_size)}


@onnx_lowers(Q.QuantizeLinear)
def _quantize(op, g, x):
    attrs = _axis_attr(g, op, x)
    if op.to.is_float8 and (not op.saturate or g.flip("saturate", "given", "omitted")):
        attrs["saturate"] = int(op.saturate)
    if g.opset >= 21 and int(op.zero_point) == 0 and g.flip("output_dtype", "attribute", "zero point"):
        return g.op("QuantizeLinear", x, _scale(g, op, x), output_dtype=op.to.onnx(), **attrs)
    zp = _zero_point(g, op, x, op.to, optional=True)
    return g.op("QuantizeLinear", x, _scale(g, op, x), zp, **attrs)


@onnx_lowers(Q.DequantizeLinear)
def _dequantize(op, g, q):
    optional = g.dtype(q) is DType.uint8 or g.dtype(q) is DType.int32
    attrs = _axis_attr(g, op, q)
    zp = _zero_point(g, op, q, g.dtype(q), optional)
    return g.op("DequantizeLinear", q, _scale(g, op, q), zp, **attrs)


@onnx_lowers(Q.DynamicQuantizeLinear)
def _dynamic(op, g, x):
    return g.op("DynamicQuantizeLinear", x, outputs=3, shape=g.shape(x))


def _optional_zp(g, zp, of):
    if int(zp) == 0 and g.flip("zero_point", "omitted", "given"):
        return None
    return g.scalar(int(zp), g.dtype(of), "zp")


@onnx_lowers(Q.MatMulInteger)
def _matmul_integer(op, g, a, b):
    return g.op("MatMulInteger", a, b, _optional_zp(g, op.a_zero_point, a), _optional_zp(g, op.b_zero_point, b))


@onnx_lowers(Q.QLinearMatMul)
def _qlinear_matmul(op, g, a, b):
    f = lambda v: g.scalar(float(v), F32, "scale")  # noqa: E731
    return g.op("QLinearMatMul", a, f(op.a_scale), g.scalar(int(op.a_zero_point), g.dtype(a), "zp"),
                b, f(op.b_scale), g.scalar(int(op.b_zero_point), g.dtype(b), "zp"),
                f(op.y_scale), g.scalar(int(op.y_zero_point), op.to, "zp"))


def _conv_attrs(op, g, x, w) -> dict:
    attrs = _common(op, g, x, w)
    attrs.update(pad_attrs(g, g.shape(x)[2:], g.shape(w)[2:], op.stride, op.dilation, op.padding))
    return attrs


@onnx_lowers(Q.ConvInteger)
def _conv_integer(op, g, x, w):
    return g.op("ConvInteger", x, w, _optional_zp(g, op.x_zero_point, x), _optional_zp(g, op.w_zero_point, w),
                **_conv_attrs(op, g, x, w))


@onnx_lowers(Q.QLinearConv)
def _qlinear_conv(op, g, x, w):
    o = g.shape(w)[0]
    if op.per_channel:
        w_scale = g.const(np.asarray(op.w_scales(o), dtype=np.float32), F32, "scale")
        w_zp = g.const(np.zeros([o], dtype=g.dtype(w).numpy()), g.dtype(w), "zp")
    else:
        w_scale, w_zp = g.scalar(float(op.w_scale), F32, "scale"), g.scalar(0, g.dtype(w), "zp")
    return g.op("QLinearConv", x, g.scalar(float(op.x_scale), F32, "scale"),
                g.scalar(int(op.x_zero_point), g.dtype(x), "zp"), w, w_scale, w_zp,
                g.scalar(float(op.y_scale), F32, "scale"), g.scalar(int(op.y_zero_point), op.to, "zp"),
                **_conv_attrs(op, g, x, w))
