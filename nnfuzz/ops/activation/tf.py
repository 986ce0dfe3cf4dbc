"""TF lowerings of the activations with ONNX's parameters (their formulas; TF broadcasts as numpy)."""
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers
from nnfuzz.ops.activation import spec as A


@tf_lowers(A.PRelu)
def _prelu(op, x, slope):
    return tf.where(x > 0, x, x * slope)


@tf_lowers(A.HardSigmoidAlphaBeta)
def _hard_sigmoid(op, x):
    return tf.clip_by_value(x * tf.cast(op.alpha, x.dtype) + tf.cast(op.beta, x.dtype), 0, 1)


@tf_lowers(A.ThresholdedRelu)
def _thresholded_relu(op, x):
    return tf.where(x > tf.cast(op.alpha, x.dtype), x, tf.zeros_like(x))


@tf_lowers(A.Shrink)
def _shrink(op, x):
    # bias is whole, so exact in every dtype; an integer x compares as the truncated lambd does (x > 0.5
    # is x > 0 for integers); an unsigned x is never below -lambd
    lambd, bias = tf.cast(op.lambd, x.dtype), tf.cast(op.bias, x.dtype)
    inner = tf.zeros_like(x) if x.dtype.is_unsigned else tf.where(x < -lambd, x + bias, tf.zeros_like(x))
    return tf.where(x > lambd, x - bias, inner)
