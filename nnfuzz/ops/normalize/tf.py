"""TF lowerings of ReduceSumSquare, GlobalLpPool, LpNormalization and MeanVarianceNormalization (their
formulas; half-precision norms accumulated in float32, as torch's CPU kernels do)."""
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.layout import compute_dtype
from nnfuzz.materialize.tensorflow.lowering import tf_lowers
from nnfuzz.ops.normalize import spec as M
from nnfuzz.ops.normalize.numpy import MVN_EPS


def _lp_norm(x, p, axes):
    v = tf.cast(x, compute_dtype(x))
    s = tf.math.reduce_sum(tf.math.abs(v) if p == 1 else v * v, axes, keepdims=True)
    return tf.cast(s if p == 1 else tf.math.sqrt(s), x.dtype)


@tf_lowers(M.ReduceSumSquare)
def _sum_square(op, x):
    return tf.math.reduce_sum(x * x, op.axis, op.keepdims)


@tf_lowers(M.GlobalLpPool)
def _global_lp_pool(op, x):
    return _lp_norm(x, op.p, list(range(2, len(x.shape))))


@tf_lowers(M.LpNormalization)
def _lp_normalization(op, x):
    return x / _lp_norm(x, op.p, op.axis)


@tf_lowers(M.MeanVarianceNormalization)
def _mvn(op, x):
    axes = list(op.axes)
    mean = tf.math.reduce_mean(x, axes, keepdims=True)
    var = tf.math.reduce_mean(x * x, axes, keepdims=True) - mean * mean
    return (x - mean) / (tf.math.sqrt(var) + tf.cast(MVN_EPS, x.dtype))
