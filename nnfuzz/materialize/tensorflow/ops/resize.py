"""Resizing as torch's F.interpolate does it, one spatial axis after the other: every output position a
weighted sum of a few input positions gathered along the axis (indices and weights computed in numpy
from the static sizes). tf.image.resize is not used: its nearest and bicubic (Keys a=-0.5) differ from
torch's (floor(i*in/out), a=-0.75), and its bilinear computes float64 inputs in float32.

Source coordinate of output i (in -> out): i*(in-1)/(out-1) with align_corners, else
(i+0.5)*in/out - 0.5 (clamped at 0 for linear); taps clamped into [0, in-1]."""
import numpy as np

from nnfuzz.abstract.ops import resize as R
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers
from nnfuzz.materialize.tensorflow.ops._layout_util import compute_dtype

CUBIC_A = -0.75  # torch's bicubic coefficient


def _source(n_in, n_out, align_corners):
    i = np.arange(n_out, dtype=np.float64)
    if align_corners:
        return i * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    return (i + 0.5) * (n_in / n_out) - 0.5


def _linear_taps(n_in, n_out, align_corners):
    src = np.maximum(_source(n_in, n_out, align_corners), 0.0)
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    return [i0, np.minimum(i0 + 1, n_in - 1)], [1.0 - t, t]


def _cubic_near(d):  # Keys' cubic convolution kernel at 0 <= d <= 1
    return ((CUBIC_A + 2) * d - (CUBIC_A + 3)) * d * d + 1


def _cubic_far(d):  # ... and at 1 < d < 2
    return ((CUBIC_A * d - 5 * CUBIC_A) * d + 8 * CUBIC_A) * d - 4 * CUBIC_A


def _cubic_taps(n_in, n_out, align_corners):
    src = _source(n_in, n_out, align_corners)
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    index = [np.clip(i0 + k, 0, n_in - 1) for k in (-1, 0, 1, 2)]
    return index, [_cubic_far(t + 1), _cubic_near(t), _cubic_near(1 - t), _cubic_far(2 - t)]


def _separable(op, x, taps):
    v = tf.cast(x, compute_dtype(x))
    for axis, n_out in enumerate(op.size, start=2):
        index, weight = taps(int(v.shape[axis]), n_out, op.align_corners)
        shape = [1] * len(v.shape)
        shape[axis] = n_out
        v = tf.add_n([tf.constant(w.reshape(shape), dtype=v.dtype) * tf.gather(v, ix, axis=axis)
                      for ix, w in zip(index, weight)])
    return tf.cast(v, x.dtype)


@tf_lowers(R.ResizeNearest)
def _nearest(op, x):
    for axis, n_out in enumerate(op.size, start=2):
        n_in = int(x.shape[axis])
        x = tf.gather(x, np.arange(n_out) * n_in // n_out, axis=axis)  # floor(i * in / out), exactly
    return x


@tf_lowers(R.ResizeLinear)
def _linear(op, x):
    return _separable(op, x, _linear_taps)


@tf_lowers(R.ResizeCubic)
def _cubic(op, x):
    return _separable(op, x, _cubic_taps)
