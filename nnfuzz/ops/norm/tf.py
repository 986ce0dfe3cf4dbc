"""Normalisations with tf.nn.moments (biased variance, as torch) and tf.nn.batch_normalization,
half-precision inputs computed in float32 like torch's CPU kernels. BatchNorm's running statistics
are the torch lowering's constants: linspace(-0.5, 0.5, C) and linspace(0.5, 2, C) (BatchNormTraining updates
them with the batch mean and unbiased variance, as torch does)."""
import numpy as np

from nnfuzz.ops.norm import spec as N
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers
from nnfuzz.materialize.tensorflow.layout import compute_dtype, shape_of


def _per_channel(v, rank, dtype):
    """A [C] vector shaped [1, C, 1, ...] to broadcast against a channels-first rank-``rank`` tensor."""
    return tf.reshape(tf.cast(v, dtype), [1, -1] + [1] * (rank - 2))


def _normalize(x, axes, eps, w=None, b=None):
    mean, var = tf.nn.moments(x, axes, keepdims=True)
    return tf.nn.batch_normalization(x, mean, var, b, w, eps)


@tf_lowers(N.BatchNorm)
def _batch_norm(op, x, w, b):
    dt, r, c = compute_dtype(x), len(x.shape), int(x.shape[1])
    mean = _per_channel(tf.constant(np.linspace(-0.5, 0.5, c)), r, dt)
    var = _per_channel(tf.constant(np.linspace(0.5, 2.0, c)), r, dt)
    y = tf.nn.batch_normalization(tf.cast(x, dt), mean, var, _per_channel(b, r, dt), _per_channel(w, r, dt), op.eps)
    return tf.cast(y, x.dtype)


@tf_lowers(N.InstanceNorm)
def _instance_norm(op, x, w, b):
    dt, r = compute_dtype(x), len(x.shape)
    y = _normalize(tf.cast(x, dt), list(range(2, r)), op.eps, _per_channel(w, r, dt), _per_channel(b, r, dt))
    return tf.cast(y, x.dtype)


@tf_lowers(N.GroupNorm)
def _group_norm(op, x, w, b):
    dt, shape = compute_dtype(x), shape_of(x)
    grouped = tf.reshape(tf.cast(x, dt), [shape[0], op.groups, -1])
    y = tf.reshape(_normalize(grouped, [2], op.eps), shape)
    r = len(shape)
    return tf.cast(y * _per_channel(w, r, dt) + _per_channel(b, r, dt), x.dtype)


@tf_lowers(N.LayerNorm)
def _layer_norm(op, x, *params):
    dt, r = compute_dtype(x), len(x.shape)
    w, b = (tf.cast(p, dt) for p in params) if op.affine else (None, None)
    return tf.cast(_normalize(tf.cast(x, dt), list(range(r - op.k, r)), op.eps, w, b), x.dtype)


@tf_lowers(N.BatchNormTraining)
def _batch_norm_training(op, x, w, b):
    from nnfuzz.ops.norm.numpy import torch_linspace

    r, c = len(x.shape), int(x.shape[1])
    axes = [0] + list(range(2, r))
    n = int(np.prod([int(x.shape[a]) for a in axes]))
    y = _normalize(x, axes, op.eps, _per_channel(w, r, x.dtype), _per_channel(b, r, x.dtype))
    mean, var = tf.nn.moments(x, axes)
    m, dt = op.momentum, x.dtype.as_numpy_dtype
    old_mean = tf.constant(torch_linspace(-0.5, 0.5, c, np.dtype(dt)))
    old_var = tf.constant(torch_linspace(0.5, 2.0, c, np.dtype(dt)))
    return y, (1 - m) * old_mean + m * mean, (1 - m) * old_var + m * (var * (n / (n - 1)))
