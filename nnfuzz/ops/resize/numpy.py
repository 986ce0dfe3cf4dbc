"""Resizing the spatial dims of an [N, C, *spatial] tensor to ``op.size``, separably: one spatial
axis after the other, each output position i a weighted sum of a few input positions (taps)
around its source coordinate. Floats in float64 (rounded once by eval_op).

Source coordinate of output i (input size S, output size O):
  align_corners:      i * (S-1)/(O-1)            (0 when O == 1)
  otherwise:          (i + 0.5) * S/O - 0.5      (half-pixel centres)
Nearest: input index floor(i * S / O) (asymmetric), computed exactly in integers; uint8 stays uint8.
Linear:  the source clamped at 0; taps floor(src) and the next (clamped to S-1), weights 1-t, t
         where t = src - floor(src).
Cubic:   taps floor(src) - 1 .. floor(src) + 2 (indices clamped into [0, S-1]) with Keys' cubic
         convolution weights, coefficient A = -0.75 (torch's bicubic).
"""
import numpy as np

from nnfuzz.ops.resize import spec as R
from nnfuzz.reference.registry import evaluates

CUBIC_A = -0.75


def _source(n_in, n_out, align_corners):
    i = np.arange(n_out, dtype=np.float64)
    if align_corners:
        return i * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    return (i + 0.5) * (n_in / n_out) - 0.5


def linear_taps(n_in, n_out, align_corners):
    src = np.maximum(_source(n_in, n_out, align_corners), 0.0)
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    return [i0, np.minimum(i0 + 1, n_in - 1)], [1.0 - t, t]


def _cubic_near(d):  # the kernel at 0 <= d <= 1
    return ((CUBIC_A + 2) * d - (CUBIC_A + 3)) * d * d + 1


def _cubic_far(d):  # the kernel at 1 < d < 2
    return ((CUBIC_A * d - 5 * CUBIC_A) * d + 8 * CUBIC_A) * d - 4 * CUBIC_A


def cubic_taps(n_in, n_out, align_corners):
    src = _source(n_in, n_out, align_corners)
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    index = [np.clip(i0 + k, 0, n_in - 1) for k in (-1, 0, 1, 2)]
    return index, [_cubic_far(t + 1), _cubic_near(t), _cubic_near(1 - t), _cubic_far(2 - t)]


def _resample(v, axis, index, weight):
    """sum over taps k of weight[k][i] * v[..., index[k][i], ...] along ``axis``."""
    shape = [1] * v.ndim
    shape[axis] = -1
    return sum(w.reshape(shape) * np.take(v, ix, axis=axis) for ix, w in zip(index, weight))


def _separable(op, x, taps):
    v = np.asarray(x, dtype=np.float64)
    for axis, n_out in enumerate(op.size, start=2):
        v = _resample(v, axis, *taps(v.shape[axis], n_out, op.align_corners))
    return v


@evaluates(R.ResizeNearest)
def _nearest(op, x):
    for axis, n_out in enumerate(op.size, start=2):
        n_in = x.shape[axis]
        x = np.take(x, np.arange(n_out) * n_in // n_out, axis=axis)  # one tap, weight 1: any dtype
    return x


@evaluates(R.ResizeLinear)
def _linear(op, x):
    return _separable(op, x, linear_taps)


@evaluates(R.ResizeCubic)
def _cubic(op, x):
    return _separable(op, x, cubic_taps)
