"""Reference evals of the indexing ops, written from the ONNX operator definitions; the constant index
tensors come from ``spec.py`` as in every lowering."""
import numpy as np

from nnfuzz.ops.indexing import spec as I
from nnfuzz.reference.registry import evaluates


def _num(x):
    return x if x.dtype.kind in "iub" else np.asarray(x, dtype=np.float64)


@evaluates(I.TopK)
def _topk(op, x):
    """Sorted; equal entries lower index first: a stable ascending sort, for ``largest`` of the
    reversed axis, read backwards (so ties still come lower index first)."""
    v = _num(x)
    n = v.shape[op.axis]
    if op.largest:
        order = np.flip(np.argsort(np.flip(v, op.axis), axis=op.axis, kind="stable"), op.axis)
        order = n - 1 - order
    else:
        order = np.argsort(v, axis=op.axis, kind="stable")
    idx = np.take(order, np.arange(op.k), axis=op.axis)
    return np.take_along_axis(x, idx, op.axis), idx


@evaluates(I.GatherElements)
def _gather_elements(op, x):
    shape = list(x.shape)
    shape[op.axis] = op.n
    idx = I.gather_indices(shape, x.shape[op.axis], op.pick)
    return x[tuple(np.moveaxis(I.full_coords(idx, op.axis), -1, 0))]


_COMBINE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


@evaluates(I.ScatterElements)
def _scatter_elements(op, data, upd):
    """One update at a time, in order: each target is set (none) or combined with every update sent
    to it (floats in float64, integers wrap in their dtype)."""
    idx = I.scatter_element_indices(op, data.shape, upd.shape)
    out = _num(data).copy()
    u = _num(upd)
    for p, q in zip(np.ndindex(*upd.shape), I.full_coords(idx, op.axis).reshape(-1, data.ndim)):
        q = tuple(int(c) for c in q)
        out[q] = u[p] if op.reduction == "none" else _COMBINE[op.reduction](out[q], u[p])
    return out


@evaluates(I.ScatterND)
def _scatter_nd(op, data, upd):
    pos = I.nd_positions(data.shape[:op.k], upd.shape[0], op.pick)
    out = _num(data).copy()
    u = _num(upd)
    for j, q in enumerate(pos):
        q = tuple(int(c) for c in q)
        out[q] = u[j] if op.reduction == "none" else _COMBINE[op.reduction](out[q], u[j])
    return out


@evaluates(I.OneHot)
def _one_hot(op, x):
    v = x.astype(np.int64)
    v = np.where(v < 0, v + op.depth, v)
    hit = v[..., None] == np.arange(op.depth)
    return np.moveaxis(np.where(hit, op.values[1], op.values[0]), -1, op.axis)


@evaluates(I.Range)
def _range(op, x):
    n = x.shape[op.axis]
    return op.start + op.delta * np.arange(n, dtype=np.float64 if op.dtype.is_float else np.int64)


@evaluates(I.ReverseSequence)
def _reverse_sequence(op, x):
    lens = I.sequence_lens(x.shape[op.batch_axis], x.shape[op.time_axis], op.pick)
    out = x.copy()
    for b, n in enumerate(lens):
        sel = [slice(None)] * x.ndim
        sel[op.batch_axis], sel[op.time_axis] = b, slice(0, int(n))
        src = [slice(None)] * x.ndim
        src[op.batch_axis], src[op.time_axis] = b, slice(int(n) - 1, None, -1)
        out[tuple(sel)] = x[tuple(src)]
    return out
