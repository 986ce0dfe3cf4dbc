"""TF lowerings of the reductions over one axis and of Softmax, LogSoftmax and CumSum."""
from functools import partial

from nnfuzz.ops.reduce import spec as R
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import TF_LOWERINGS, tf_lowers

# y = f(x, axis, keepdims); TF's reductions keep the input dtype (integer sums wrap, as torch's with
# dtype=x.dtype) and accumulate float16/bfloat16 in float32, as torch does
_REDUCE = {
    R.ReduceSum: lambda x, axis, keepdims: tf.math.reduce_sum(x, axis, keepdims),
    R.ReduceProd: lambda x, axis, keepdims: tf.math.reduce_prod(x, axis, keepdims),
    R.ReduceMean: lambda x, axis, keepdims: tf.math.reduce_mean(x, axis, keepdims),
    R.ReduceMax: lambda x, axis, keepdims: tf.math.reduce_max(x, axis, keepdims),  # NaN propagates
    R.ReduceMin: lambda x, axis, keepdims: tf.math.reduce_min(x, axis, keepdims),
    R.ReduceL1: lambda x, axis, keepdims: tf.math.reduce_sum(tf.math.abs(x), axis, keepdims),
    R.ReduceL2: lambda x, axis, keepdims: tf.math.sqrt(tf.math.reduce_sum(tf.math.square(x), axis, keepdims)),
    R.LogSumExp: lambda x, axis, keepdims: tf.math.reduce_logsumexp(x, axis, keepdims),
}


def _reduce(f, op, x):
    return f(x, op.axis, op.keepdims)


for _cls, _fn in _REDUCE.items():
    TF_LOWERINGS[_cls] = partial(_reduce, _fn)


def _arg(find, x, axis, keepdims):
    i = find(x, axis=axis, output_type=tf.int64)
    if x.dtype.is_floating:  # torch counts NaN as the extreme: the first NaN wins (TF skips NaNs)
        nan = tf.math.is_nan(x)
        i = tf.where(tf.math.reduce_any(nan, axis), tf.math.argmax(tf.cast(nan, tf.int8), axis=axis,
                                                                   output_type=tf.int64), i)
    return tf.expand_dims(i, axis) if keepdims else i


@tf_lowers(R.ArgMax)
def _argmax(op, x):
    return _arg(tf.math.argmax, x, op.axis, op.keepdims)


@tf_lowers(R.ArgMin)
def _argmin(op, x):
    return _arg(tf.math.argmin, x, op.axis, op.keepdims)


@tf_lowers(R.Softmax)
def _softmax(op, x):
    return tf.nn.softmax(x, axis=op.axis)


@tf_lowers(R.LogSoftmax)
def _log_softmax(op, x):
    return tf.nn.log_softmax(x, axis=op.axis)


@tf_lowers(R.CumSum)
def _cumsum(op, x):
    # inclusive, in x's dtype (int32 wraps); TF's cumsum would accumulate float16/bfloat16 in their
    # own precision (a bfloat16 prefix sum drifts by percents), torch's accumulates in float32
    if x.dtype in (tf.float16, tf.bfloat16):
        return tf.cast(tf.math.cumsum(tf.cast(x, tf.float32), axis=op.axis), x.dtype)
    return tf.math.cumsum(x, axis=op.axis)
