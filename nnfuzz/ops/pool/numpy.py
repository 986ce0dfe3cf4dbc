"""Pooling over the spatial dims of an ``[N, C, *spatial]`` tensor (ceil_mode off).

MaxPool / AvgPool: one generic N-d window loop. Output position o of a spatial dim looks at input
positions ``o*stride - pad + j*dilation`` for j < kernel; positions in the padding are skipped by
max (they never win) and count as zeros in the mean only with ``count_include_pad`` (the divisor
is then the kernel volume, else the number of input elements in the window).
Adaptive pools: output bin i of a dim covers ``[floor(i*S/out), ceil((i+1)*S/out))``.

Floats in float64 (rounded once by eval_op); integer max pools compare in their own dtype.
"""
import itertools

import numpy as np

from nnfuzz.ops.pool import spec as P
from nnfuzz.reference.registry import evaluates


def num(x):
    """Integers as they are, floats (bfloat16 included) in float64."""
    return x if x.dtype.kind in "iu" else np.asarray(x, dtype=np.float64)


def window_view(padded, offset, dilation, stride, out):
    """The elements of ``padded`` (spatial dims last) that kernel offset ``offset`` (one index per
    spatial dim) meets, one per output position: ``padded[..., o*stride + j*dilation]``."""
    idx = tuple(slice(j * d, j * d + (n - 1) * s + 1, s) for j, d, s, n in zip(offset, dilation, stride, out))
    return padded[(Ellipsis,) + idx]


def windows(op, x, fill):
    """x[N, C, *S] -> (values[N, C, *S', K], inside[*S', K]): the K = prod(kernel) elements of
    every window, padding read as ``fill``, and whether each lies in the input (not the padding)."""
    pads = [(p, p) for p in op.padding]
    padded = np.pad(x, [(0, 0), (0, 0)] + pads, constant_values=fill)
    inside = np.pad(np.ones(x.shape[2:], dtype=bool), pads)
    out = [(size + 2 * p - d * (k - 1) - 1) // s + 1
           for size, k, s, p, d in zip(x.shape[2:], op.kernel, op.stride, op.padding, op.dilation)]
    offsets = list(itertools.product(*(range(k) for k in op.kernel)))
    values = [window_view(padded, j, op.dilation, op.stride, out) for j in offsets]
    masks = [window_view(inside, j, op.dilation, op.stride, out) for j in offsets]
    return np.stack(values, axis=-1), np.stack(masks, axis=-1)


def _lowest(v):
    return np.iinfo(v.dtype).min if v.dtype.kind in "iu" else -np.inf


@evaluates(P.MaxPool1d, P.MaxPool2d, P.MaxPool3d)
def _max_pool(op, x):
    v = num(x)
    values, _ = windows(op, v, fill=_lowest(v))
    return np.max(values, axis=-1)  # NaN propagates


@evaluates(P.AvgPool1d, P.AvgPool2d, P.AvgPool3d)
def _avg_pool(op, x):
    values, inside = windows(op, num(x), fill=0.0)
    count = np.prod(op.kernel) if op.count_include_pad else np.sum(inside, axis=-1)
    return np.sum(values, axis=-1) / count


def _spatial(x):
    return tuple(range(2, x.ndim))


@evaluates(P.GlobalAvgPool)
def _global_avg_pool(op, x):
    return np.mean(num(x), axis=_spatial(x), keepdims=True)


@evaluates(P.GlobalMaxPool)
def _global_max_pool(op, x):
    return np.max(num(x), axis=_spatial(x), keepdims=True)


def _bins(size, out):
    """Adaptive pooling's [start, end) input range of each of the ``out`` output positions."""
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def _adaptive(x, out_h, out_w, reduce):
    v = num(x)
    y = np.empty(v.shape[:2] + (out_h, out_w), dtype=v.dtype)
    for i, (h0, h1) in enumerate(_bins(v.shape[2], out_h)):
        for j, (w0, w1) in enumerate(_bins(v.shape[3], out_w)):
            y[:, :, i, j] = reduce(v[:, :, h0:h1, w0:w1], axis=(2, 3))
    return y


@evaluates(P.AdaptiveAvgPool2d)
def _adaptive_avg_pool2d(op, x):
    return _adaptive(x, op.out_h, op.out_w, np.mean)


@evaluates(P.AdaptiveMaxPool2d)
def _adaptive_max_pool2d(op, x):
    return _adaptive(x, op.out_h, op.out_w, np.max)
