"""Quantization evals, as the ONNX spec writes them: division by the float32 scale, round half to
even (``np.rint``), then the zero point added and the result saturated to the integer type. Real
values are computed in float64 (eval_op rounds float outputs once); integer kernels in int64, exact.
"""
import numpy as np

from nnfuzz.ops.conv.numpy import _conv
from nnfuzz.ops.quant import spec as Q
from nnfuzz.reference.registry import evaluates


def f32(v) -> np.ndarray:
    """A scale as the float32 the model stores, widened to float64."""
    return np.asarray(np.asarray(v, dtype=np.float32), dtype=np.float64)


def scales_along(op, x: np.ndarray) -> np.ndarray:
    """``op``'s scale shaped to broadcast against ``x``: a scalar, one value per slice along its axis, or
    (blocked) each block's value repeated over its elements."""
    values, shape = Q.scale_tensor(op.scale, op.axis, op.block_size, x.shape)
    s = f32(values).reshape(shape)
    if op.axis is None:
        return s
    if op.block_size is None:
        return s.reshape([x.shape[op.axis] if k == op.axis else 1 for k in range(x.ndim)])
    return np.repeat(s, op.block_size, axis=op.axis).take(range(x.shape[op.axis]), axis=op.axis)


def quantize(real: np.ndarray, scale, zero_point, dtype, saturate: bool = True) -> np.ndarray:
    """saturate(rint(real / scale) + zero_point) in ``dtype`` (a DType); to float8, real / scale rounded to
    the nearest float8 (ml_dtypes' cast: half to even), clamped to the finite range where ``saturate``."""
    if dtype.is_float8:
        v = np.asarray(real, dtype=np.float64) / scale
        if saturate:
            v = np.clip(v, -Q.F8_MAX[dtype], Q.F8_MAX[dtype])  # NaN stays NaN
        return v.astype(dtype.numpy())
    lo, hi = Q.QRANGE[dtype]
    q = np.rint(np.asarray(real, dtype=np.float64) / scale) + int(zero_point)
    return np.clip(np.nan_to_num(q, nan=0.0), lo, hi).astype(dtype.numpy())


def requantize(acc: np.ndarray, multiplier, zero_point, dtype) -> np.ndarray:
    """An int32 accumulator scaled by ``multiplier`` (in_scale * w_scale / y_scale) and quantized."""
    lo, hi = Q.QRANGE[dtype]
    q = np.rint(acc.astype(np.float64) * multiplier) + int(zero_point)
    return np.clip(q, lo, hi).astype(dtype.numpy())


def centered(a: np.ndarray, zero_point) -> np.ndarray:
    return a.astype(np.int64) - int(zero_point)


@evaluates(Q.QuantizeLinear)
def _quantize(op, x):
    return quantize(x, scales_along(op, x), op.zero_point, op.to, op.saturate)


@evaluates(Q.DequantizeLinear)
def _dequantize(op, q):
    if q.dtype.kind in "fV" and str(q.dtype).startswith("float8"):  # zero point 0 (spec.in_range)
        return q.astype(np.float64) * scales_along(op, q)
    return centered(q, op.zero_point).astype(np.float64) * scales_along(op, q)


@evaluates(Q.DynamicQuantizeLinear)
def _dynamic(op, x):
    x32 = np.asarray(x, dtype=np.float32)
    lo, hi = min(0.0, float(x32.min())), max(0.0, float(x32.max()))
    scale = np.float32((np.float32(hi) - np.float32(lo)) / np.float32(255.0))  # float32, as the spec's output
    s = float(scale)
    zp = float(np.clip(np.rint(np.float32(-lo) / scale), 0, 255)) if s else 0.0  # float32, as the spec
    y = np.clip(np.rint(x32.astype(np.float64) / s) + zp, 0, 255) if s else np.full(x32.shape, zp)
    return y.astype(np.uint8), np.asarray(scale if s else np.nan, dtype=np.float64), np.asarray(zp).astype(np.uint8)


@evaluates(Q.MatMulInteger)
def _matmul_integer(op, a, b):
    return np.matmul(centered(a, op.a_zero_point), centered(b, op.b_zero_point)).astype(np.int32)


@evaluates(Q.QLinearMatMul)
def _qlinear_matmul(op, a, b):
    acc = np.matmul(centered(a, op.a_zero_point), centered(b, op.b_zero_point))
    mult = f32(op.a_scale) * f32(op.b_scale) / f32(op.y_scale)
    return requantize(acc, mult, op.y_zero_point, op.to)


@evaluates(Q.ConvInteger)
def _conv_integer(op, x, w):
    acc = _conv(op, centered(x, op.x_zero_point), centered(w, op.w_zero_point))  # float64: exact below 2^53
    return np.rint(acc).astype(np.int64).astype(np.int32)


@evaluates(Q.QLinearConv)
def _qlinear_conv(op, x, w):
    acc = np.rint(_conv(op, centered(x, op.x_zero_point), w.astype(np.int64)))
    o = w.shape[0]
    mult = f32(op.x_scale) * f32(op.w_scales(o)).reshape(1, o, 1, 1) / f32(op.y_scale)
    return requantize(acc, mult, op.y_zero_point, op.to)
