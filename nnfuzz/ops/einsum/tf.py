from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers
from nnfuzz.ops.einsum import spec as S


@tf_lowers(S.Einsum)
def _einsum(op, *xs):
    return tf.einsum(op.equation, *xs)
