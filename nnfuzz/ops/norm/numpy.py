"""Normalisations: ``(x - mean) / sqrt(var + eps) * weight + bias`` with the biased variance,
in float64 (rounded once by eval_op). They differ in where mean and var come from:

BatchNorm:    fixed running statistics, as the lowering makes them: mean = linspace(-0.5, 0.5, C)
              and var = linspace(0.5, 2.0, C), built (and so rounded) in the input dtype.
BatchNormTraining: the batch's statistics over N and S; BatchNorm's running statistics updated with
              the batch mean and unbiased variance (torch's rule).
InstanceNorm: per (sample, channel), over the spatial dims.
GroupNorm:    per (sample, group of C/groups channels), over those channels and the spatial dims.
LayerNorm:    over the last k dims; with ``affine``, weight and bias have the shape of those dims.
BatchNorm, InstanceNorm and GroupNorm apply a per-channel weight[C] and bias[C].
"""
from fractions import Fraction

import numpy as np

from nnfuzz.ops.norm import spec as N
from nnfuzz.reference.registry import evaluates


def f64(x):
    return np.asarray(x, dtype=np.float64)


def torch_linspace(start, end, steps, dtype):
    """torch.linspace(start, end, steps, dtype=dtype) as torch's CPU kernel computes it: step =
    (end - start) / (steps - 1) in ``dtype``; point i is start + i*step in the first half and
    end - (steps-1-i)*step in the second. float16/bfloat16 round after the multiply and after the
    add; float32/float64 round once (the kernel's multiply-add is fused)."""
    t = dtype.type
    if steps == 1:
        return np.array([start], dtype=dtype)
    step = (t(end) - t(start)) / t(steps - 1)
    i = np.arange(steps)
    first = i < steps // 2
    base = np.where(first, t(start), t(end)).astype(dtype)
    k = np.where(first, i, i - (steps - 1))  # signed multiples of step from the nearer end
    if dtype.itemsize < 4:
        return base + step * k.astype(dtype)
    exact = [Fraction(float(b)) + Fraction(float(step)) * int(j) for b, j in zip(base, k)]
    return np.array([float(v) for v in exact]).astype(dtype)  # float32 points are exact in float64


def _per_channel(a, ndim):
    """a[C] shaped to broadcast along dim 1 of a rank-``ndim`` tensor."""
    return f64(a).reshape((-1,) + (1,) * (ndim - 2))


def _normalize(v, axes, eps):
    mean = np.mean(v, axis=axes, keepdims=True)
    var = np.mean((v - mean) ** 2, axis=axes, keepdims=True)
    return (v - mean) / np.sqrt(var + eps)


@evaluates(N.BatchNorm)
def _batch_norm(op, x, w, b):
    c = x.shape[1]
    mean = _per_channel(torch_linspace(-0.5, 0.5, c, x.dtype), x.ndim)
    var = _per_channel(torch_linspace(0.5, 2.0, c, x.dtype), x.ndim)
    y = (f64(x) - mean) / np.sqrt(var + op.eps)
    return y * _per_channel(w, x.ndim) + _per_channel(b, x.ndim)


@evaluates(N.BatchNormTraining)
def _batch_norm_training(op, x, w, b):
    axes = (0,) + tuple(range(2, x.ndim))
    v, c = f64(x), x.shape[1]
    y = _normalize(v, axes, op.eps) * _per_channel(w, x.ndim) + _per_channel(b, x.ndim)
    n = v.size // c
    mean, var = v.mean(axis=axes), v.var(axis=axes) * n / (n - 1)
    m = op.momentum
    running_mean = (1 - m) * f64(torch_linspace(-0.5, 0.5, c, x.dtype)) + m * mean
    running_var = (1 - m) * f64(torch_linspace(0.5, 2.0, c, x.dtype)) + m * var
    return y, running_mean, running_var


@evaluates(N.InstanceNorm)
def _instance_norm(op, x, w, b):
    y = _normalize(f64(x), tuple(range(2, x.ndim)), op.eps)
    return y * _per_channel(w, x.ndim) + _per_channel(b, x.ndim)


@evaluates(N.GroupNorm)
def _group_norm(op, x, w, b):
    grouped = f64(x).reshape(x.shape[0], op.groups, -1)  # [N, groups, C/groups * prod(S)]
    y = _normalize(grouped, (2,), op.eps).reshape(x.shape)
    return y * _per_channel(w, x.ndim) + _per_channel(b, x.ndim)


@evaluates(N.LayerNorm)
def _layer_norm(op, x, *params):
    y = _normalize(f64(x), tuple(range(x.ndim - op.k, x.ndim)), op.eps)
    if op.affine:
        w, b = params
        y = y * f64(w) + f64(b)
    return y
