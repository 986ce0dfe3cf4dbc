"""TF lowerings of MatMul (torch.matmul's rules), Linear and Gemm."""
from nnfuzz.ops.linear import spec as L
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers


def _matmul(a, b, transpose_b=False):
    """torch.matmul: a 1-D operand becomes a matrix (a row on the left, a column on the right) and
    that unit dim leaves the result; TF's matmul broadcasts the batch dims of the rest."""
    a2 = tf.expand_dims(a, 0) if a.shape.rank == 1 else a
    b2 = tf.expand_dims(b, 0 if transpose_b else 1) if b.shape.rank == 1 else b
    out = tf.linalg.matmul(a2, b2, transpose_b=transpose_b)
    if b.shape.rank == 1:
        out = tf.squeeze(out, -1)
    if a.shape.rank == 1:
        out = tf.squeeze(out, -2 if b.shape.rank > 1 else -1)
    return out


@tf_lowers(L.MatMul)
def _matmul_op(op, a, b):
    return _matmul(a, b)


@tf_lowers(L.Linear)
def _linear(op, x, w, b):
    return _matmul(x, w, transpose_b=True) + b


@tf_lowers(L.Gemm)
def _gemm(op, a, b, c):
    int_ = not a.dtype.is_floating  # integer rows have integral alpha and beta, applied as integers
    alpha, beta = (int(op.alpha), int(op.beta)) if int_ else (op.alpha, op.beta)
    ab = tf.linalg.matmul(a, b, transpose_a=op.trans_a, transpose_b=op.trans_b)
    return tf.constant(alpha, a.dtype) * ab + tf.constant(beta, a.dtype) * c
