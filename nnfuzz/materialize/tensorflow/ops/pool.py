"""Pooling: TF's channels-last pool kernels (VALID) on an input padded as torch pads it (-inf for max,
zeros for avg, with the divisor fixed up where ``count_include_pad`` is off). Dilated windows, and the
3-D pools in dtypes TF's CPU MaxPool3D/AvgPool3D lack, reduce the windows' strided slices instead."""
import functools
import itertools

import numpy as np

from nnfuzz.abstract.ops import pool as P
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers
from nnfuzz.materialize.tensorflow.ops._layout_util import pad_spatial, shape_of, to_first, to_last


def _out_sizes(op, padded_sizes):
    return [(n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(padded_sizes, op.kernel, op.stride, op.dilation)]


def _windows(op, x):
    """One strided slice of padded channels-first x per kernel tap: that tap's element of every window."""
    out = _out_sizes(op, shape_of(x)[2:])
    for taps in itertools.product(*(range(k) for k in op.kernel)):
        yield x[(slice(None), slice(None)) + tuple(slice(j * d, j * d + (m - 1) * s + 1, s)
                                                  for j, d, s, m in zip(taps, op.dilation, op.stride, out))]


def _native(op, x, dtypes_3d):
    return all(d == 1 for d in op.dilation) and (len(op.kernel) < 3 or x.dtype in dtypes_3d)


@tf_lowers(P.MaxPool1d, P.MaxPool2d, P.MaxPool3d)
def _max_pool(op, x):
    lowest = x.dtype.min if x.dtype.is_integer else -np.inf
    x = pad_spatial(x, op.padding, lowest)
    if _native(op, x, (tf.float16, tf.bfloat16, tf.float32)):
        return to_first(tf.nn.max_pool(to_last(x), list(op.kernel), list(op.stride), "VALID"))
    return functools.reduce(tf.maximum, _windows(op, x))


def _in_window_counts(op, sizes):
    """Input (not padding) elements of each window, [*S'], for the unpadded spatial sizes."""
    per_dim = []
    for n, k, s, p, m in zip(sizes, op.kernel, op.stride, op.padding, _out_sizes(op, [n + 2 * p for n, p in
                                                                                         zip(sizes, op.padding)])):
        start = np.arange(m) * s - p
        per_dim.append(np.minimum(start + k, n) - np.maximum(start, 0))
    return functools.reduce(np.multiply.outer, per_dim)


@tf_lowers(P.AvgPool1d, P.AvgPool2d, P.AvgPool3d)
def _avg_pool(op, x):
    sizes = shape_of(x)[2:]
    xp = pad_spatial(x, op.padding)
    if _native(op, x, (tf.float32,)):
        y = to_first(tf.nn.avg_pool(to_last(xp), list(op.kernel), list(op.stride), "VALID"))
    else:
        y = tf.add_n(list(_windows(op, xp))) / tf.cast(np.prod(op.kernel), x.dtype)
    if not op.count_include_pad and any(op.padding):  # the mean of the input elements only
        y = y * tf.constant(np.prod(op.kernel) / _in_window_counts(op, sizes), dtype=x.dtype)
    return y


@tf_lowers(P.GlobalAvgPool)
def _global_avg_pool(op, x):
    return tf.reduce_mean(x, axis=list(range(2, len(x.shape))), keepdims=True)


@tf_lowers(P.GlobalMaxPool)
def _global_max_pool(op, x):
    return tf.reduce_max(x, axis=list(range(2, len(x.shape))), keepdims=True)


def _adaptive(pool, op, x):
    """Input sizes are multiples of the output sizes: a fixed pool with kernel = stride = size / out."""
    h, w = shape_of(x)[2:]
    k = [h // op.out_h, w // op.out_w]
    return to_first(pool(to_last(x), k, k, "VALID"))


@tf_lowers(P.AdaptiveAvgPool2d)
def _adaptive_avg_pool2d(op, x):
    return _adaptive(tf.nn.avg_pool, op, x)


@tf_lowers(P.AdaptiveMaxPool2d)
def _adaptive_max_pool2d(op, x):
    return _adaptive(tf.nn.max_pool, op, x)
