"""Resizing as torch's F.interpolate does it, one spatial axis after the other: every output position a
weighted sum of a few input positions gathered along the axis (indices and weights computed in numpy
from the static sizes). tf.image.resize is not used: its nearest and bicubic (Keys a=-0.5) differ from
torch's (floor(i*in/out), a=-0.75), and its bilinear computes float64 inputs in float32.

Source coordinate of output i (in -> out): i*(in-1)/(out-1) with align_corners, else
(i+0.5)*in/out - 0.5 (clamped at 0 for linear); taps clamped into [0, in-1]."""
import numpy as np

from nnfuzz.ops.resize import spec as R
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers
from nnfuzz.materialize.tensorflow.layout import compute_dtype
# the taps (indices and weights per output position) are the numpy reference's: the same static
# arithmetic; the torch check (F.interpolate) keeps both honest
from nnfuzz.ops.resize.numpy import cubic_taps, linear_taps


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
    return _separable(op, x, linear_taps)


@tf_lowers(R.ResizeCubic)
def _cubic(op, x):
    return _separable(op, x, cubic_taps)
