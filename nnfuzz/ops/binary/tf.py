"""TF lowerings of the broadcasting binary ops and logical Not (TF's ops broadcast as numpy does)."""
from nnfuzz.ops.binary import spec as B
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lower_each

tf_lower_each({
    B.Add: "math.add",  # integers wrap, as in torch
    B.Sub: "math.subtract",
    B.Mul: "math.multiply",
    B.Div: "math.truediv",  # floats only
    B.Pow: "math.pow",
    B.Max: "math.maximum",  # NaN propagates, as in torch
    B.Min: "math.minimum",
    B.Equal: "math.equal",
    B.Greater: "math.greater",
    B.Less: "math.less",
    B.GreaterEqual: "math.greater_equal",
    B.LessEqual: "math.less_equal",
    B.And: "math.logical_and",
    B.Or: "math.logical_or",
    B.Xor: "math.logical_xor",
    B.Not: "math.logical_not",
})


def _fmod(x, y):
    # C fmod (sign of x) is TF's truncatemod; it has no float16/bfloat16 kernel, and fmod is exact
    # (the result is representable in the operands' type), so float32 gives the same values
    if x.dtype in (tf.float16, tf.bfloat16):
        return tf.cast(tf.truncatemod(tf.cast(x, tf.float32), tf.cast(y, tf.float32)), x.dtype)
    return tf.truncatemod(x, y)


tf_lower_each({B.Fmod: _fmod})
