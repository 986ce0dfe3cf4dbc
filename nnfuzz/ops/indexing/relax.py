"""Relax lowerings of the indexing ops, their constant indices from ``spec.py`` as int64 tensors
(``g.indices``). TopK has none: its rule for equal entries (the first one first) is not Relax's topk's."""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_lowers
from nnfuzz.ops.indexing import spec as I


def _with_dim(shape, axis, n):
    return [n if i == axis else int(d) for i, d in enumerate(shape)]


@relax_lowers(I.GatherElements)
def _gather_elements(op, g, x):
    dims = g.shape(x)
    idx = I.gather_indices(_with_dim(dims, op.axis, op.n), dims[op.axis], op.pick)
    return R.gather_elements(x, g.indices(idx), op.axis)


_REDUCTION = {"none": "update", "add": "add", "mul": "mul", "max": "max", "min": "min"}


@relax_lowers(I.ScatterElements)
def _scatter_elements(op, g, data, upd):
    idx = I.scatter_element_indices(op, list(g.shape(data)), list(g.shape(upd)))
    return R.scatter_elements(data, g.indices(idx), upd, op.axis, _REDUCTION[op.reduction])


@relax_lowers(I.ScatterND)
def _scatter_nd(op, g, data, upd):
    pos = I.nd_positions(list(g.shape(data))[:op.k], g.shape(upd)[0], op.pick)
    return R.scatter_nd(data, g.indices(pos), upd, _REDUCTION[op.reduction])


@relax_lowers(I.OneHot)
def _one_hot(op, g, x):
    """Each index (negatives wrapped by depth) compared with 0..depth-1, as the torch lowering."""
    v = g.emit(R.astype(x, "int64"))
    v = R.where(R.less(v, g.scalar(0, "int64")), R.add(v, g.scalar(op.depth, "int64")), v)
    hit = R.equal(R.expand_dims(v, -1), R.arange(0, op.depth, 1, "int64"))
    dt = op.dtype.value
    out = g.emit(R.where(hit, g.scalar(op.values[1], dt), g.scalar(op.values[0], dt)))
    r = g.rank(x)
    perm = list(range(op.axis)) + [r] + list(range(op.axis, r))  # the new last dim moved to axis
    return R.permute_dims(out, perm)


@relax_lowers(I.Range)
def _range(op, g, x):
    n = g.shape(x)[op.axis]
    wide = "float64" if op.dtype.is_float else "int64"  # exact: small ints and binary fractions
    steps = R.arange(0, n, 1, wide)
    return R.astype(R.add(g.scalar(op.start, wide), R.multiply(g.scalar(op.delta, wide), steps)), op.dtype.value)


@relax_lowers(I.ReverseSequence)
def _reverse_sequence(op, g, x):
    """A gather along the time axis: position t of batch b reads lens[b] - 1 - t below lens[b]."""
    import numpy as np

    dims = g.shape(x)
    t_ax, b_ax = op.time_axis, op.batch_axis
    time, batch = dims[t_ax], dims[b_ax]
    lens = np.asarray(I.sequence_lens(batch, time, op.pick), dtype=np.int64)
    t = np.arange(time)
    src = np.where(t[None, :] < lens[:, None], lens[:, None] - 1 - t[None, :], t[None, :])
    if t_ax < b_ax:
        src = src.T
    src = np.broadcast_to(src.reshape(list(src.shape) + [1] * (len(dims) - 2)), dims)
    return R.gather_elements(x, g.indices(src), t_ax)


