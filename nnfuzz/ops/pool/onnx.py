"""ONNX lowerings of the pools (MaxPool, AveragePool, the global and adaptive pools).

Drawn spellings: symmetric padding as explicit ``pads`` or, where it gives the same padding, an
``auto_pad`` (``VALID`` when unpadded, ``SAME_UPPER``/``SAME_LOWER`` when SAME pads exactly ``pad``
on both sides); with explicit pads, ``ceil_mode=1`` where every dim divides evenly (the same windows); attributes at
their defaults given or omitted; MaxPool's optional ``Indices`` output requested or not.
"""
from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.pool import spec as P

_POOL_FLOATS = (DType.float16, DType.float32, DType.float64)  # the ONNX pools' float types


def same_total_pad(size: int, kernel: int, stride: int, dilation: int) -> int:
    """The total padding ``auto_pad=SAME_*`` gives a dim: output ceil(size / stride) (ONNX spec)."""
    out = -(-size // stride)
    return (out - 1) * stride + dilation * (kernel - 1) + 1 - size


def pad_attrs(g, sizes, kernel, stride, dilation, padding) -> dict:
    """``pads`` (begin and end both ``padding``) or an equivalent ``auto_pad``, drawn."""
    padding = [int(p) for p in padding]
    options = ["pads"]
    if not any(padding):
        options.append("VALID")
    if all(same_total_pad(s, k, st, d) == 2 * p for s, k, st, d, p in zip(sizes, kernel, stride, dilation, padding)):
        options += ["SAME_UPPER", "SAME_LOWER"]
    how = g.draw("auto_pad", options)
    if how != "pads":
        return {"auto_pad": how}
    attrs = {"auto_pad": "NOTSET"} if g.flip("auto_pad_attr", "NOTSET", "omitted") else {}
    if any(padding) or g.flip("pads", "zeros", "omitted"):
        attrs["pads"] = padding * 2
    return attrs


def default_ints(g, key: str, values, default: int) -> dict:
    """``{key: values}``, or nothing when every value is the default (drawn)."""
    values = [int(v) for v in values]
    if all(v == default for v in values) and g.flip(key, "omitted", "given"):
        return {}
    return {key: values}


def _ceil_mode(g, sizes, kernel, stride, dilation, padding) -> dict:
    """``ceil_mode`` 0 (given or omitted), or 1 where it makes the same windows (every dim divides)."""
    exact = all((s + 2 * p - d * (k - 1) - 1) % st == 0
                for s, k, st, p, d in zip(sizes, kernel, stride, padding, dilation))
    how = g.draw("ceil_mode", ["omitted", "0"] + (["1"] if exact else []))
    return {} if how == "omitted" else {"ceil_mode": int(how)}


def _window_attrs(op, g, x) -> dict:
    sizes = g.shape(x)[2:]
    args = (sizes, op.kernel, op.stride, op.dilation, op.padding)
    attrs = {"kernel_shape": [int(k) for k in op.kernel], **pad_attrs(g, *args)}
    if attrs.get("auto_pad", "NOTSET") == "NOTSET":  # ceil_mode has no meaning with SAME/VALID
        attrs.update(_ceil_mode(g, *args))
    return {**attrs, **default_ints(g, "strides", op.stride, 1)}


@onnx_lowers(P.MaxPool1d, P.MaxPool2d, P.MaxPool3d)
def _max_pool(op, g, x):
    attrs = {**_window_attrs(op, g, x), **default_ints(g, "dilations", op.dilation, 1)}
    if g.dtype(x) in _POOL_FLOATS and g.flip("indices", "requested", "omitted"):
        return g.op("MaxPool", x, outputs=2, **attrs)[0]
    return g.op("MaxPool", x, **attrs)


@onnx_lowers(P.AvgPool1d, P.AvgPool2d, P.AvgPool3d)
def _avg_pool(op, g, x):
    attrs = _window_attrs(op, g, x)
    if op.count_include_pad or (not any(op.padding) and g.flip("count_include_pad", "1", "0")):
        attrs["count_include_pad"] = 1
    elif g.flip("count_include_pad_attr", "given", "omitted"):
        attrs["count_include_pad"] = 0
    if g.opset >= 19:  # AveragePool takes dilations from opset 19
        attrs.update(default_ints(g, "dilations", op.dilation, 1))
    return g.op("AveragePool", x, **attrs)


def _reduce(g, op_type: str, x, axes, keepdims: int):
    """ReduceMean/ReduceMax over ``axes`` (an input from opset 18, an attribute before)."""
    ins, at = g.axes_arg(g.axes(axes, g.rank(x)), 18)
    return g.op(op_type, x, *ins, keepdims=keepdims, **at)


@onnx_lowers(P.GlobalAvgPool)
def _global_avg_pool(op, g, x):
    """GlobalAveragePool, or a keepdims ReduceMean over the spatial dims, or an AveragePool whose
    kernel is the whole spatial extent (drawn)."""
    spatial = list(range(2, g.rank(x)))
    how = g.draw("global", ["GlobalAveragePool", "ReduceMean", "AveragePool"])
    if how == "ReduceMean":
        return _reduce(g, "ReduceMean", x, spatial, 1)
    if how == "AveragePool":
        return g.op("AveragePool", x, kernel_shape=list(g.shape(x)[2:]))
    return g.op("GlobalAveragePool", x)


@onnx_lowers(P.GlobalMaxPool)
def _global_max_pool(op, g, x):
    """A keepdims ReduceMax over the spatial dims; for the float types GlobalMaxPool is drawn too."""
    spatial = list(range(2, g.rank(x)))
    if g.dtype(x) in _POOL_FLOATS and g.flip("global", "GlobalMaxPool", "ReduceMax"):
        return g.op("GlobalMaxPool", x)
    return _reduce(g, "ReduceMax", x, spatial, 1)


_ADAPTIVE = {P.AdaptiveAvgPool2d: ("AveragePool", "ReduceMean", "GlobalAveragePool"),
             P.AdaptiveMaxPool2d: ("MaxPool", "ReduceMax", "GlobalMaxPool")}


@onnx_lowers(P.AdaptiveAvgPool2d, P.AdaptiveMaxPool2d)
def _adaptive_pool(op, g, x):
    """ONNX has no adaptive pool. The spec makes each input size a multiple of its output size, so
    every bin is ``size / out`` wide and the bins tile the input: a pool with that kernel and stride,
    or a Reshape to [N, C, out_h, kh, out_w, kw] and a reduction over the kh, kw dims, or (for a
    1x1 output) the global pool (drawn). (Without the multiple, bins would overlap and it would take
    one Slice + reduction per output cell and a Concat; the spec rules that case out.)"""
    pool, reduce, global_ = _ADAPTIVE[type(op)]
    n, c, h, w = g.shape(x)
    oh, ow = int(op.out_h), int(op.out_w)
    kernel = [h // oh, w // ow]
    options = ["pool", "Reshape"] + (["global"] if (oh, ow) == (1, 1) else [])
    how = g.draw("adaptive", options)
    if how == "global":
        return g.op(global_, x)
    if how == "Reshape":
        split = g.op("Reshape", x, g.shape_operand([n, c, oh, kernel[0], ow, kernel[1]], x),
                     shape=(n, c, oh, kernel[0], ow, kernel[1]))
        return _reduce(g, reduce, split, [3, 5], 0)
    return g.op(pool, x, kernel_shape=kernel, strides=kernel)
