"""ONNX lowerings of the norm family.

BatchNorm:    BatchNormalization in inference mode, the running mean/variance written as constants
              made exactly as the torch lowering makes them (numpy.py's ``torch_linspace``).
InstanceNorm: InstanceNormalization, or composed (below).
GroupNorm:    GroupNormalization only from opset 21: at 18-20 its scale and bias are per group, where
              torch's weight and bias are per channel. At every opset: x reshaped to [N, groups, -1],
              normalised per (sample, group) by InstanceNormalization with unit scale and zero bias or
              by the composition, reshaped back, then the per-channel weight and bias applied.
LayerNorm:    LayerNormalization from opset 17 (its scale is required: ones without ``affine``), and
              before 17 only composed.

The composition is ``(x - mean) / sqrt(var + eps)`` with ``mean`` and the biased ``var`` from
ReduceMean; float16/bfloat16 compositions run in float32 between two Casts, as torch's CPU kernels
compute those types in float32.
"""
import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.compose import attrs, has, opmath, spell
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.norm import spec as N
from nnfuzz.ops.norm.numpy import torch_linspace
from nnfuzz.ops.reduce.onnx import reduce

GROUP_NORM_PER_CHANNEL_SINCE = 21  # GroupNormalization-18 scales per group, torch per channel
STASH_DOUBLE = 11  # stash_type (TensorProto.DOUBLE): float64 statistics; the default 1 rounds them to float32


def _stash(dt) -> int:
    """stash_type for a normalization of ``dt``: float64 statistics for float64 (as torch computes them),
    else float32. With the float32 default on a float64 LayerNormalization, ORT's CUDA kernel (T=double,
    U=float) did what the model said and was 1e-6 off the float64 reference: a false alarm of ort-gpu."""
    return STASH_DOUBLE if dt is DType.float64 else 1


def normalize(g, x, axes, eps):
    """(x - mean) / sqrt(var + eps) over ``axes`` of ``x``, var biased, from ReduceMean."""
    shape = g.shape(x)
    d = g.op("Sub", x, reduce(g, "ReduceMean", x, axes, True), shape=shape)
    square = spell(g, "square", {"Mul": lambda: g.op("Mul", d, d, shape=shape),
                                 "Pow": lambda: g.op("Pow", d, g.like(2.0, d), shape=shape)})
    var = reduce(g, "ReduceMean", square, axes, True)
    return g.op("Div", d, g.op("Sqrt", g.op("Add", var, g.like(eps, var))), shape=shape)


def per_channel(g, p, rank):
    """A per-channel parameter p[C] shaped [C, 1, ...] to broadcast along dim 1 of a rank-``rank`` x."""
    if rank == 2:
        return p
    c = g.shape(p)[0]
    shape = (c,) + (1,) * (rank - 2)
    return spell(g, "per_channel", {
        "Unsqueeze": lambda: g.op("Unsqueeze", p, g.ints(g.axes(range(1, rank - 1), rank - 1)), shape=shape),
        "Reshape": lambda: g.op("Reshape", p, g.shape_operand(shape, p), shape=shape)})


def channel_affine(g, y, w, b):
    """y * w + b with w[C], b[C] per channel (dim 1 of y), in y's dtype."""
    rank = g.rank(y)
    w, b = (g.cast(p, g.dtype(y)) for p in (w, b))
    return g.op("Add", g.op("Mul", y, per_channel(g, w, rank), shape=g.shape(y)), per_channel(g, b, rank),
                shape=g.shape(y))


@onnx_lowers(N.BatchNorm)
def _batch_norm(op, g, x, w, b):
    dt = g.dtype(x)
    c = g.shape(x)[1]
    mean = g.const(torch_linspace(-0.5, 0.5, c, np.dtype(dt.numpy())), dt, "mean")
    var = g.const(torch_linspace(0.5, 2.0, c, np.dtype(dt.numpy())), dt, "var")
    mode = {"training_mode": 0} if g.opset >= 14 else {}  # before 14, one output says inference
    return g.op("BatchNormalization", x, w, b, mean, var,  # momentum: unused in inference, its default
                **attrs(g, "BatchNormalization", epsilon=float(op.eps), momentum=0.9, **mode))


@onnx_lowers(N.BatchNormTraining)
def _batch_norm_training(op, g, x, w, b):
    """Composed (ONNX's training-mode BatchNormalization updates the running variance with the biased
    batch variance and the other momentum convention): y as InstanceNorm's composition over N and S, the
    running statistics from ReduceMean."""
    dt, rank, shape = g.dtype(x), g.rank(x), g.shape(x)
    c = shape[1]
    axes = [0] + list(range(2, rank))
    n = int(np.prod([shape[a] for a in axes]))
    y = channel_affine(g, normalize(g, x, axes, op.eps), w, b)
    d = g.op("Sub", x, reduce(g, "ReduceMean", x, axes, True), shape=shape)
    batch_mean = reduce(g, "ReduceMean", x, axes, False)
    batch_var = g.op("Mul", reduce(g, "ReduceMean", g.op("Mul", d, d, shape=shape), axes, False),
                     g.like(n / (n - 1), batch_mean))
    m = op.momentum
    out = []
    for start, end, batch, name in ((-0.5, 0.5, batch_mean, "mean"), (0.5, 2.0, batch_var, "var")):
        old = g.const(torch_linspace(start, end, c, np.dtype(dt.numpy())), dt, name)
        out.append(g.op("Add", g.op("Mul", old, g.like(1 - m, old)), g.op("Mul", batch, g.like(m, batch))))
    return y, out[0], out[1]


@onnx_lowers(N.InstanceNorm)
def _instance_norm(op, g, x, w, b):
    """InstanceNormalization, or composed over the spatial dims."""
    axes = list(range(2, g.rank(x)))
    return spell(g, "InstanceNorm", {
        "InstanceNormalization": lambda: g.op("InstanceNormalization", x, w, b,
                                              **attrs(g, "InstanceNormalization", epsilon=float(op.eps))),
        "composed": lambda: opmath(g, x, lambda v: channel_affine(g, normalize(g, v, axes, op.eps), w, b))})


def _grouped(g, x, groups):
    """x[N, C, *S] reshaped to [N, groups, C / groups * prod(S)] (the shape written in a drawn form)."""
    n = g.shape(x)[0]
    m = int(np.prod(g.shape(x))) // (n * groups)
    target = g.draw("group_shape", [[n, groups, m], [n, groups, -1], [0, groups, -1]])
    return g.op("Reshape", x, g.shape_operand(target, x), shape=(n, groups, m))


def _group_norm_composed(op, g, x, w, b, normalizer):
    y = normalizer(_grouped(g, x, op.groups))
    y = g.op("Reshape", y, g.shape_operand(g.shape(x), x), shape=g.shape(x))
    return channel_affine(g, y, w, b)


@onnx_lowers(N.GroupNorm)
def _group_norm(op, g, x, w, b):
    """GroupNormalization from opset 21 (float64 statistics for float64), or x grouped and normalised
    by InstanceNormalization (unit scale, zero bias) or by the composition (see the module)."""
    dt, groups, eps = g.dtype(x), op.groups, float(op.eps)

    def by_instance_norm(v):
        ones, zeros = g.const(np.ones(groups), dt, "ones"), g.const(np.zeros(groups), dt, "zeros")
        return g.op("InstanceNormalization", v, ones, zeros, **attrs(g, "InstanceNormalization", epsilon=eps))

    def node():
        return g.op("GroupNormalization", x, w, b,
                    **attrs(g, "GroupNormalization", num_groups=groups, epsilon=eps, stash_type=_stash(dt)))

    options = {"GroupNormalization": node} if g.opset >= GROUP_NORM_PER_CHANNEL_SINCE else {}
    options["Reshape+InstanceNormalization"] = lambda: _group_norm_composed(op, g, x, w, b, by_instance_norm)
    options["composed"] = lambda: opmath(
        g, x, lambda v: _group_norm_composed(op, g, v, w, b, lambda r: normalize(g, r, [2], eps)))
    return spell(g, "GroupNorm", options)


@onnx_lowers(N.LayerNorm)
def _layer_norm(op, g, x, *params):
    """LayerNormalization (opset 17+), or composed over the last k dims."""
    rank, k = g.rank(x), op.k
    axes = list(range(rank - k, rank))

    def node():
        dt, normalized = g.dtype(x), g.shape(x)[rank - k:]
        w, b = params if op.affine else (g.const(np.ones(normalized), dt, "ones"), None)
        if not op.affine and g.flip("bias", "zeros", "omitted"):
            b = g.const(np.zeros(normalized), dt, "zeros")
        return g.op("LayerNormalization", x, w, b, **attrs(g, "LayerNormalization", axis=g.axis(rank - k, rank),
                                                             epsilon=float(op.eps), stash_type=_stash(dt)))

    def composed(v):
        y = normalize(g, v, axes, op.eps)
        if op.affine:
            w, b = (g.cast(p, g.dtype(v)) for p in params)
            y = g.op("Add", g.op("Mul", y, w, shape=g.shape(v)), b, shape=g.shape(v))
        return y

    options = {"LayerNormalization": node} if has(g, "LayerNormalization", g.dtype(x), g.dtype(x)) else {}
    options["composed"] = lambda: opmath(g, x, composed)
    return spell(g, "LayerNorm", options)
