"""Pooling over the spatial dims of an ``[N, C, *spatial]`` tensor (ceil_mode off).

MaxPool / AvgPool: one generic N-d window loop. Output position o of a spatial dim looks at input
positions ``o*stride - pad + j*dilation`` for j < kernel; positions in the padding are skipped by
max (they never win) and count as zeros in the mean only with ``count_include_pad`` (the divisor
is then the kernel volume, else the number of input elements in the window).
Adaptive pools: output bin i of a dim covers ``[floor(i*S/out), ceil((i+1)*S/out))``.

Floats in float64 (rounded once by eval_op); integer max pools compare in their own dtype.
"""
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


def positions(size: int, out: int, k: int, stride: int, pad: int, dilation: int):
    """(input index, whether it lies in the input) of kernel tap j at output position o of one spatial
    dim, ``o*stride - pad + j*dilation``: two [out, k] arrays (indices clipped into the input)."""
    idx = (np.arange(out) * stride - pad)[:, None] + (np.arange(k) * dilation)[None, :]
    return np.clip(idx, 0, size - 1), (idx >= 0) & (idx < size)


def out_sizes(spatial, kernel, stride, padding, dilation):
    """A window's output size per spatial dim (no ceil mode): pools' and convolutions' one rule."""
    return [(size + 2 * p - d * (k - 1) - 1) // s + 1 for size, k, s, p, d in zip(spatial, kernel, stride, padding, dilation)]


def _pool_out(op, spatial):
    return out_sizes(spatial, op.kernel, op.stride, op.padding, op.dilation)


def pooled(op, x, fill, reduce):
    """``reduce`` (max or sum) over every window of x[N, C, *S], one spatial dim at a time (both are
    separable): each dim's windows are gathered as [out, k], positions in the padding read as ``fill``,
    and reduced over k. Never a padded copy nor all windows at once: a 3-D pool with a large kernel and
    padding took a producer to 6.6 GB that way (issue 30's soak)."""
    for ax, (k, s, p, d, n) in enumerate(zip(op.kernel, op.stride, op.padding, op.dilation, _pool_out(op, x.shape[2:]))):
        axis = 2 + ax
        idx, ok = positions(x.shape[axis], n, k, s, p, d)
        taps = np.take(x, idx, axis=axis)  # [..., out, k, ...]
        if not ok.all():
            taps = np.where(ok.reshape(ok.shape + (1,) * (taps.ndim - axis - 2)), taps, np.asarray(fill, x.dtype))
        x = reduce(taps, axis=axis + 1)
    return x


def inside_count(op, spatial):
    """The number of input (not padding) elements in each window: [*S']."""
    count = np.ones((), dtype=np.int64)
    for size, k, s, p, d, n in zip(spatial, op.kernel, op.stride, op.padding, op.dilation, _pool_out(op, spatial)):
        count = count[..., None] * positions(size, n, k, s, p, d)[1].sum(axis=1)
    return count


def _lowest(v):
    return np.iinfo(v.dtype).min if v.dtype.kind in "iu" else -np.inf


@evaluates(P.MaxPool1d, P.MaxPool2d, P.MaxPool3d)
def _max_pool(op, x):
    v = num(x)
    return pooled(op, v, _lowest(v), np.max)  # NaN propagates


@evaluates(P.AvgPool1d, P.AvgPool2d, P.AvgPool3d)
def _avg_pool(op, x):
    total = pooled(op, num(x), 0.0, np.sum)
    return total / (np.prod(op.kernel) if op.count_include_pad else inside_count(op, x.shape[2:]))


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
