"""Quantization as fake quantization in torch: the spec's arithmetic on float and integer tensors
(``torch.round`` rounds half to even), so the reference model, the value search and the float64 twin
run quantized graphs like any other. Real values are computed in the float dtype the graph gives them
(float32; float64 in the twin, where every integer arrives as int64); integer kernels accumulate in
int64 (convolutions in float64, exact below 2^53)."""
import torch
import torch.nn.functional as F

from nnfuzz.ops.quant import spec as Q
from nnfuzz.materialize.torch.lowering import lowers


def _f32(v, device):
    """Scale value(s) ``v`` as the spec holds them (float32), widened exactly to a float64 tensor. Made by torch,
    not numpy: dynamo traces numpy into tensors, and a float tensor's tolist() is a graph break under
    fullgraph (inductor's dynamic models met it)."""
    return torch.tensor(v, dtype=torch.float32, device=device).double()


def _scales(op, x, fdt):
    """``op``'s scale as a tensor broadcasting against ``x`` (a scalar, per slice along its axis, or each
    block's value repeated over its elements)."""
    values, shape = Q.scale_tensor(op.scale, op.axis, op.block_size, list(x.shape))
    s = _f32(values, x.device).to(fdt).reshape(shape)
    if op.axis is None:
        return s
    if op.block_size is None:
        return s.reshape([x.shape[op.axis] if k == op.axis else 1 for k in range(x.dim())])
    return s.repeat_interleave(op.block_size, dim=op.axis).narrow(op.axis, 0, x.shape[op.axis])


def _real_dtype(q):
    """float32, or float64 in the float64 twin (which widens every integer to int64, and float8's carrier to
    float64)."""
    return torch.float64 if q.dtype in (torch.int64, torch.float64) else torch.float32


def _saturate(v, dtype):
    lo, hi = Q.QRANGE[dtype]
    return torch.clamp(v, lo, hi).to(dtype.torch())  # int4/uint4/uint16: their carrier (DType.torch)


def _to_float8(v, dtype, saturate: bool):
    """``v`` rounded to the float8 ``dtype``'s grid (half to even), held in ``v``'s float dtype (the carrier):
    clamped to the finite range where ``saturate``, else an overflow is NaN (e4m3fn) or +-inf (e5m2)."""
    top = Q.F8_MAX[dtype]
    f8 = torch.float8_e4m3fn if dtype is Q.DType.float8_e4m3fn else torch.float8_e5m2
    y = torch.clamp(v, -top, top).to(f8).to(v.dtype)
    if saturate:
        return y
    bound, inclusive = Q.F8_OVERFLOW[dtype]
    over = v.abs() >= bound if inclusive else v.abs() > bound
    if dtype is Q.DType.float8_e5m2:
        big = torch.copysign(torch.full_like(v, float("inf")), v)
    else:
        big = torch.full_like(v, float("nan"))
    return torch.where(over, big, y)


def quantize_steps(v, op):
    """QuantizeLinear's result from ``v``, the real values in steps (x / scale)."""
    if op.to.is_float8:
        return _to_float8(v, op.to, op.saturate)
    return _saturate(torch.round(v) + int(op.zero_point), op.to)


@lowers(Q.QuantizeLinear)
def _quantize(op, x):
    return quantize_steps(x / _scales(op, x, x.dtype), op)


@lowers(Q.DequantizeLinear)
def _dequantize(op, q):
    fdt = _real_dtype(q)
    return (q.to(fdt) - int(op.zero_point)) * _scales(op, q, fdt)


@lowers(Q.DynamicQuantizeLinear)
def _dynamic(op, x):
    lo, hi = torch.clamp(x.min(), max=0.0), torch.clamp(x.max(), min=0.0)
    scale = (hi - lo) / 255.0
    scale = torch.where(scale == 0, torch.full_like(scale, float("nan")), scale)  # all zeros: undefined (spec.py)
    zp = torch.clamp(torch.round(-lo / scale), 0, 255)
    y = torch.clamp(torch.round(x / scale) + zp, 0, 255)
    return y.to(torch.uint8), scale, zp.to(torch.uint8)


def _centered(a, zero_point):
    return a.long() - int(zero_point)


def _requantize(acc, multiplier, zero_point, dtype):
    return _saturate(torch.round(acc.double() * multiplier) + int(zero_point), dtype)


def _int_conv(op, x, w):
    return torch.round(F.conv2d(x.double(), w.double(), None, stride=op.stride, padding=op.padding,
                                dilation=op.dilation, groups=op.groups))


def matmul_multiplier(op, device):
    """QLinearMatMul's requantization factor a_scale * b_scale / y_scale (float64, of the float32 scales)."""
    return _f32(op.a_scale, device) * _f32(op.b_scale, device) / _f32(op.y_scale, device)


def conv_multiplier(op, o: int, device):
    """QLinearConv's per-output-channel requantization factors, shaped [1, o, 1, 1] for its accumulator."""
    return _f32(op.w_scales(o), device).reshape(1, o, 1, 1) * _f32(op.x_scale, device) / _f32(op.y_scale, device)


@lowers(Q.MatMulInteger)
def _matmul_integer(op, a, b):
    return torch.matmul(_centered(a, op.a_zero_point), _centered(b, op.b_zero_point)).to(torch.int32)


@lowers(Q.QLinearMatMul)
def _qlinear_matmul(op, a, b):
    acc = torch.matmul(_centered(a, op.a_zero_point), _centered(b, op.b_zero_point))
    return _requantize(acc, matmul_multiplier(op, acc.device), op.y_zero_point, op.to)


@lowers(Q.ConvInteger)
def _conv_integer(op, x, w):
    return _int_conv(op, _centered(x, op.x_zero_point), _centered(w, op.w_zero_point)).to(torch.int32)


@lowers(Q.QLinearConv)
def _qlinear_conv(op, x, w):
    acc = _int_conv(op, _centered(x, op.x_zero_point), w.long())
    return _requantize(acc, conv_multiplier(op, w.shape[0], x.device), op.y_zero_point, op.to)
