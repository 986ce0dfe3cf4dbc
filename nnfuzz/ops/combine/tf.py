"""Concat, Split, Slice and Gather along one axis (Gather's indices are a constant of the op)."""
from nnfuzz.ops.combine import spec as C
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers


@tf_lowers(C.Concat)
def _concat(op, *xs):
    return tf.concat(xs, op.axis)


@tf_lowers(C.Split)
def _split(op, x):
    return tf.split(x, op.sizes, op.axis)


@tf_lowers(C.Slice)
def _slice(op, x):
    return x[(slice(None),) * op.axis + (slice(op.start, op.end, op.step),)]


@tf_lowers(C.Gather)
def _gather(op, x):
    return tf.gather(x, tf.constant(op.indices, dtype=tf.int64), axis=op.axis)
