"""TF lowerings of the indexing ops, on the constant indices of ``spec.py``. TF's top_k works on the
last axis and only for the largest entries; scatters take full index tuples."""
import numpy as np

from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers
from nnfuzz.ops.indexing import spec as I


def _to_last(x, axis):
    perm = [i for i in range(x.shape.rank) if i != axis] + [axis]
    return tf.transpose(x, perm), np.argsort(perm).tolist()


@tf_lowers(I.TopK)
def _topk(op, x):
    """top_k on the axis moved last (equal entries lower index first, as ONNX); the smallest entries
    are the largest of an order-reversing map (-x for floats, ~x for integers: no overflow)."""
    xt, back = _to_last(x, op.axis)
    key = xt if op.largest else (-xt if x.dtype.is_floating else tf.bitwise.invert(xt))
    _, idx = tf.math.top_k(key, op.k, sorted=True)
    vals = tf.gather(xt, idx, batch_dims=xt.shape.rank - 1)
    return tf.transpose(vals, back), tf.transpose(tf.cast(idx, tf.int64), back)


@tf_lowers(I.GatherElements)
def _gather_elements(op, x):
    shape = [op.n if i == op.axis else int(d) for i, d in enumerate(x.shape)]
    idx = I.gather_indices(shape, int(x.shape[op.axis]), op.pick)
    return tf.gather_nd(x, tf.constant(I.full_coords(idx, op.axis)))


_SCATTER = {"none": "tensor_scatter_nd_update", "add": "tensor_scatter_nd_add", "max": "tensor_scatter_nd_max",
            "min": "tensor_scatter_nd_min"}


@tf_lowers(I.ScatterElements)
def _scatter_elements(op, data, upd):
    """One tensor_scatter_nd_* on full index tuples; mul (TF has no scatter-multiply) as data times
    the per-position product of the updates sent there (unsorted_segment_prod, 1 where none)."""
    idx = I.scatter_element_indices(op, data.shape, upd.shape)
    coords = I.full_coords(idx, op.axis)
    if op.reduction != "mul":
        return getattr(tf, _SCATTER[op.reduction])(data, tf.constant(coords), upd)
    flat = np.ravel_multi_index(tuple(np.moveaxis(coords, -1, 0)), tuple(int(d) for d in data.shape))
    prod = tf.math.unsorted_segment_prod(tf.reshape(upd, [-1]), tf.constant(flat.reshape(-1)),
                                         int(np.prod(data.shape)))
    return data * tf.reshape(prod, data.shape)


_COMBINE = {"none": lambda old, new: new, "add": lambda a, b: a + b, "mul": lambda a, b: a * b,
            "max": lambda a, b: tf.math.maximum(a, b), "min": lambda a, b: tf.math.minimum(a, b)}


@tf_lowers(I.ScatterND)
def _scatter_nd(op, data, upd):
    """Distinct index tuples: each target slice is set to its combination with one update slice."""
    pos = tf.constant(I.nd_positions([int(d) for d in data.shape[:op.k]], int(upd.shape[0]), op.pick))
    return tf.tensor_scatter_nd_update(data, pos, _COMBINE[op.reduction](tf.gather_nd(data, pos), upd))


@tf_lowers(I.OneHot)
def _one_hot(op, x):
    """tf.one_hot gives a row of off values for a negative index: ONNX's wrap is applied first."""
    v = tf.cast(x, tf.int64)
    v = tf.where(v < 0, v + op.depth, v)
    dt = op.dtype.tensorflow()
    return tf.one_hot(v, op.depth, on_value=tf.constant(op.values[1], dt), off_value=tf.constant(op.values[0], dt),
                      axis=op.axis if op.axis < x.shape.rank else -1, dtype=dt)


@tf_lowers(I.Range)
def _range(op, x):
    n = int(x.shape[op.axis])
    if op.dtype.is_float:
        steps = tf.range(n, dtype=tf.float64)
        return tf.cast(op.start + op.delta * steps, op.dtype.tensorflow())
    return tf.cast(op.start + int(op.delta) * tf.range(n, dtype=tf.int64), op.dtype.tensorflow())


@tf_lowers(I.ReverseSequence)
def _reverse_sequence(op, x):
    lens = I.sequence_lens(int(x.shape[op.batch_axis]), int(x.shape[op.time_axis]), op.pick)
    return tf.reverse_sequence(x, tf.constant(lens), seq_axis=op.time_axis, batch_axis=op.batch_axis)
