"""TF lowerings of the integer ops (TF's ops broadcast as numpy does). floormod takes the divisor's
sign (ONNX Mod with fmod=0), truncatediv truncates (ONNX integer Div)."""
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lower_each, tf_lowers
from nnfuzz.ops.bitwise import spec as K

tf_lower_each({
    K.BitwiseAnd: "bitwise.bitwise_and",
    K.BitwiseOr: "bitwise.bitwise_or",
    K.BitwiseXor: "bitwise.bitwise_xor",
    K.BitwiseNot: "bitwise.invert",
    K.Mod: "math.floormod",
    K.IntDiv: "truncatediv",
})


@tf_lowers(K.BitShift)
def _shift(op, x, y):
    shift = tf.bitwise.left_shift if op.direction == "LEFT" else tf.bitwise.right_shift
    return shift(x, y)


@tf_lowers(K.IntPow)
def _int_pow(op, x, y):
    return tf.math.pow(x, tf.cast(y, x.dtype))
