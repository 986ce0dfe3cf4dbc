"""Padding in torch's F.pad order (last axis first). Constant and reflect pads are tf.pad (negative
constant pads crop first, as torch does); replicate and circular gather each padded axis with the
source index of every output position (clamped, or modulo the dim)."""
import numpy as np

from nnfuzz.ops.pad import spec as P
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers
from nnfuzz.materialize.tensorflow.layout import shape_of


def _padded_axes(op, x):
    """(axis, begin, end) per padded axis."""
    r = len(x.shape)
    return [(r - 1 - k, op.pads[2 * k], op.pads[2 * k + 1]) for k in range(len(op.pads) // 2)]


def _paddings(op, x):
    paddings = [[0, 0] for _ in x.shape]
    for axis, b, e in _padded_axes(op, x):
        paddings[axis] = [b, e]
    return paddings


@tf_lowers(P.ConstantPad)
def _constant_pad(op, x):
    shape = shape_of(x)
    crop = tuple(slice(max(0, -b), n - max(0, -e)) for n, (b, e) in zip(shape, _paddings(op, x)))
    if any(b < 0 or e < 0 for b, e in _paddings(op, x)):
        x = x[crop]
    pads = [[max(0, b), max(0, e)] for b, e in _paddings(op, x)]
    return tf.pad(x, pads, constant_values=tf.cast(op.value, x.dtype))


@tf_lowers(P.ReflectPad)
def _reflect_pad(op, x):
    return tf.pad(x, _paddings(op, x), mode="REFLECT")


def _gather_pad(op, x, source):
    """Each padded axis gathered at ``source(positions from -begin to dim + end - 1, dim)``."""
    for axis, b, e in _padded_axes(op, x):
        n = int(x.shape[axis])
        x = tf.gather(x, source(np.arange(-b, n + e), n), axis=axis)
    return x


@tf_lowers(P.ReplicatePad)
def _replicate_pad(op, x):
    return _gather_pad(op, x, lambda i, n: np.clip(i, 0, n - 1))


@tf_lowers(P.CircularPad)
def _circular_pad(op, x):
    return _gather_pad(op, x, lambda i, n: i % n)
