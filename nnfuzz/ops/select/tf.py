"""TF lowerings of Where (broadcasting select), Clip and Cast."""
from nnfuzz.ops.select import spec as S
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers


@tf_lowers(S.Where)
def _where(op, cond, x, y):
    return tf.where(cond, x, y)  # TF2's where broadcasts all three


@tf_lowers(S.Clip)
def _clip(op, x):
    # min(max(x, lo), hi) as torch.clamp (NaN stays NaN); integer tensors get the bounds as integers
    lo, hi = (op.min, op.max) if x.dtype.is_floating else (int(op.min), int(op.max))
    return tf.minimum(tf.maximum(x, tf.constant(lo, x.dtype)), tf.constant(hi, x.dtype))


@tf_lowers(S.Cast)
def _cast(op, x):
    # as torch: float to int truncates toward zero, integers wrap, to bool is x != 0 (NaN is true)
    return tf.cast(x, getattr(tf, op.to.value))
