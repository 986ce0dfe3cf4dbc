"""Pooling: TF's channels-last pool kernels (VALID) on an input padded as torch pads it (-inf for max,
zeros for avg, with the divisor fixed up where ``count_include_pad`` is off). Dilated max pools, and
the 3-D pools in dtypes TF's CPU MaxPool3D/AvgPool3D lack, pool one spatial axis at a time (a box's
max, or its mean over the whole kernel, is that of its rows) with TF's 2-D kernels, whose dilated form
is tf.nn.pool at stride 1, subsampled. A pool whose padding would multiply the input's size (a kernel of
thousands on an input of a few: legal, and drawn by the generator) is computed without padding, by
gathering each window's input elements axis by axis (``_gathered``): padding it would take gigabytes."""
import functools

import numpy as np

from nnfuzz.ops.pool import spec as P
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers
from nnfuzz.materialize.tensorflow.layout import compute_dtype, pad_spatial, shape_of, to_first, to_last


def _kernel(kind):
    """TF's pool kernel (tf.nn.max_pool/avg_pool, unlike tf.nn.pool, take strides longer than the window)."""
    return tf.nn.max_pool if kind == "MAX" else tf.nn.avg_pool


def _pool_axis(x, axis, kind, k, s, d):
    """A 1-D pool of kernel k, stride s and dilation d along ``axis`` of x (VALID)."""
    shape = shape_of(x)
    n = shape[axis]
    m = (n - d * (k - 1) - 1) // s + 1
    y = tf.reshape(x, [int(np.prod(shape[:axis])), n, int(np.prod(shape[axis + 1:])), 1])
    if d == 1:
        y = _kernel(kind)(y, [k, 1], [s, 1], "VALID")
    else:  # tf.nn.pool takes no stride along with a dilation
        y = tf.nn.pool(y, [k, 1], kind, strides=[1, 1], padding="VALID", dilations=[d, 1])[:, ::s]
    return tf.reshape(y, shape[:axis] + [m] + shape[axis + 1:])


def _pool(op, x, kind, dtypes_3d):
    """The pool of padded channels-first x, by TF's N-d kernel where it has one, else axis by axis."""
    if all(d == 1 for d in op.dilation) and (len(op.kernel) < 3 or x.dtype in dtypes_3d):
        return to_first(_kernel(kind)(to_last(x), list(op.kernel), list(op.stride), "VALID"))
    for axis, (k, s, d) in enumerate(zip(op.kernel, op.stride, op.dilation), start=2):
        x = _pool_axis(x, axis, kind, k, s, d)
    return x


PADDED_LIMIT = 1 << 22  # elements of the padded input above which (and above 4x the input) pools gather


def _oversized(op, x) -> bool:
    shape = shape_of(x)
    padded = int(np.prod(shape[:2])) * int(np.prod([n + 2 * p for n, p in zip(shape[2:], op.padding)]))
    return padded > PADDED_LIMIT and padded > 4 * int(np.prod(shape))


def _gathered(op, x, kind):
    """The pool without padding: along each spatial axis, the input elements of every window gathered
    ([..., out, taps, ...]; taps outside the input masked) and reduced. Max: the max of the real
    elements; AVG: their sum (the caller divides)."""
    dilation = getattr(op, "dilation", (1,) * len(op.kernel))
    for axis, (k, s, p, d) in enumerate(zip(op.kernel, op.stride, op.padding, dilation), start=2):
        n = shape_of(x)[axis]
        start = np.arange((n + 2 * p - d * (k - 1) - 1) // s + 1) * s - p
        first = np.maximum(-(start // d), 0)             # first tap inside the input: ceil(-start / d)
        last = np.minimum((n - 1 - start) // d, k - 1)  # last tap inside the input
        width = max(1, int((last - first + 1).max()))
        taps = first[:, None] + np.arange(width)[None, :]
        valid = taps <= last[:, None]
        index = np.where(valid, start[:, None] + d * taps, 0)
        g = tf.gather(x, index, axis=axis)  # [..., out, width, ...]
        mask = tf.reshape(tf.constant(valid), [1] * axis + list(valid.shape) + [1] * (len(x.shape) - axis - 1))
        if kind == "MAX":
            lowest = x.dtype.min if x.dtype.is_integer else -np.inf
            x = tf.reduce_max(tf.where(mask, g, tf.cast(lowest, x.dtype)), axis=axis + 1)
        else:
            x = tf.reduce_sum(tf.where(mask, g, tf.zeros_like(g)), axis=axis + 1)
    return x


@tf_lowers(P.MaxPool1d, P.MaxPool2d, P.MaxPool3d)
def _max_pool(op, x):
    if _oversized(op, x):
        return _gathered(op, x, "MAX")
    lowest = x.dtype.min if x.dtype.is_integer else -np.inf
    # MaxPool3D's half kernel is oneDNN's alone, which turns some kernel sizes down ("no device")
    return _pool(op, pad_spatial(x, op.padding, lowest), "MAX", (tf.float32,))


def _in_window_counts(op, sizes):
    """Input (not padding) elements of each window, [*S'], for the unpadded spatial sizes."""
    per_dim = []
    for n, k, s, p in zip(sizes, op.kernel, op.stride, op.padding):
        start = np.arange((n + 2 * p - k) // s + 1) * s - p
        per_dim.append(np.minimum(start + k, n) - np.maximum(start, 0))
    return functools.reduce(np.multiply.outer, per_dim)


@tf_lowers(P.AvgPool1d, P.AvgPool2d, P.AvgPool3d)
def _avg_pool(op, x):
    if _oversized(op, x):
        total = _gathered(op, tf.cast(x, compute_dtype(x)), "AVG")
        counts = np.prod(op.kernel) if op.count_include_pad else _in_window_counts(op, shape_of(x)[2:])
        return tf.cast(total / tf.constant(counts, dtype=total.dtype), x.dtype)
    y = _pool(op, pad_spatial(x, op.padding), "AVG", (tf.float32,))
    if not op.count_include_pad and any(op.padding):  # the mean of the input elements only
        y = y * tf.constant(np.prod(op.kernel) / _in_window_counts(op, shape_of(x)[2:]), dtype=x.dtype)
    return y


@tf_lowers(P.GlobalAvgPool)
def _global_avg_pool(op, x):
    return tf.reduce_mean(x, axis=list(range(2, len(x.shape))), keepdims=True)


@tf_lowers(P.GlobalMaxPool)
def _global_max_pool(op, x):
    return tf.reduce_max(x, axis=list(range(2, len(x.shape))), keepdims=True)


def _adaptive(kind, op, x):
    """Input sizes are multiples of the output sizes: a fixed pool with kernel = stride = size / out."""
    h, w = shape_of(x)[2:]
    k = [h // op.out_h, w // op.out_w]
    return to_first(_kernel(kind)(to_last(x), k, k, "VALID"))


@tf_lowers(P.AdaptiveAvgPool2d)
def _adaptive_avg_pool2d(op, x):
    return _adaptive("AVG", op, x)


@tf_lowers(P.AdaptiveMaxPool2d)
def _adaptive_max_pool2d(op, x):
    return _adaptive("MAX", op, x)
