"""Resizing as the numpy reference defines it, one spatial axis after the other: every output position
a weighted sum of a few input positions gathered along the axis (indices and weights from the
reference's taps, computed in numpy from the static sizes). tf.image.resize is not used: its nearest
and bicubic (Keys a=-0.5) differ from torch's (floor(i*in/out), a=-0.75), it has none of ONNX's other
coordinate and rounding modes, and its bilinear computes float64 inputs in float32."""
import numpy as np

from nnfuzz.ops.resize import spec as R
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers
from nnfuzz.materialize.tensorflow.layout import compute_dtype
# the taps (indices and weights per output position) are the numpy reference's: the same static
# arithmetic; the torch check (F.interpolate) and onnx's ReferenceEvaluator keep both honest
from nnfuzz.ops.resize.numpy import taps_for


@tf_lowers(R.ResizeLinear, R.ResizeCubic, R.ResizeLinearOnnx, R.ResizeCubicOnnx, R.ResizeLinearScale)
def _separable(op, x):
    v, taps = tf.cast(x, compute_dtype(x)), taps_for(op)
    for axis, n_out in enumerate(op.output_sizes([int(d) for d in x.shape[2:]]), start=2):
        index, weight = taps(int(v.shape[axis]), n_out)
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


@tf_lowers(R.ResizeNearestOnnx)
def _nearest_onnx(op, x):
    taps = taps_for(op)
    for axis, n_out in enumerate(op.size, start=2):
        (index,), _ = taps(int(x.shape[axis]), n_out)
        x = tf.gather(x, index, axis=axis)  # one tap, weight 1: any dtype
    return x
