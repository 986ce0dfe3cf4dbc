"""ONNX lowerings of Concat, Split, Slice and Gather, and ``slice_axis`` / ``write_slice``: one Slice
node along one axis in a drawn spelling, also used by the layout and pad families.

Drawn spellings: axes positive or negative; Slice's starts/ends as given, negative or clamped
(INT_MIN/INT_MAX), its axes and steps inputs given or omitted, its index type int64 or int32, its operands
constant or computed from the input's Shape; Split's sizes given or implied (equal parts, or
``num_outputs`` from opset 18) or written as one Slice per piece; Gather's indices positive or
negative, int64 or int32.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.combine import spec as C

INT_MAX = {DType.int64: 2**63 - 1, DType.int32: 2**31 - 1}
INT_MIN = {DType.int64: -2**63, DType.int32: -2**31}


def _index_operand(g, values: Sequence[int], x: str, dtype: DType) -> str:
    """A 1-D Slice operand of ``dtype`` (int64 or int32), constant or computed from ``x``'s Shape."""
    return g.cast(g.shape_operand(values, x), dtype)


def write_slice(g, x: str, axis: int, start: int, end: int, step: int, shape, dtype: DType = DType.int64) -> str:
    """One Slice node taking ``start``/``end``/``step`` (already in the spelling the caller wants) on
    ``axis`` of ``x``, whose result has ``shape``. Drawn: axes given (positive or negative) or omitted
    (then every axis before ``axis`` gets a whole-axis entry), steps given or omitted when 1."""
    dims, rank = g.shape(x), g.rank(x)
    form = g.draw("slice_axes", ["given", "leading"] if axis else ["omitted", "given"])
    if form == "given":
        starts, ends, axes = [start], [end], [g.axis(axis, rank)]
    else:  # axes omitted: starts/ends cover axes 0..axis
        whole = [INT_MAX[dtype] if g.flip("whole_end", "INT_MAX", "dim") else dims[a] for a in range(axis)]
        starts, ends, axes = [0] * axis + [start], whole + [end], None
    steps = None
    if step != 1 or g.flip("slice_steps", "given", "omitted"):
        steps = [1] * (len(starts) - 1) + [step]
    s_in = _index_operand(g, starts, x, dtype)
    e_in = _index_operand(g, ends, x, dtype)
    a_in = None if axes is None else g.cast(g.ints(axes, "axes"), dtype)
    t_in = None if steps is None else g.cast(g.ints(steps, "steps"), dtype)
    return g.op("Slice", x, s_in, e_in, a_in, t_in, shape=shape)


def slice_axis(g, x: str, axis: int, start: int, end: int, step: int = 1) -> str:
    """``x[start:end:step]`` along ``axis`` (0 <= start <= end <= dim, step >= 1), start and end drawn
    as given, negative (counted from the end) or, for a start at 0 or an end at the dim, INT_MIN or
    INT_MAX (Slice clamps them)."""
    d = g.shape(x)[axis]
    dtype = g.draw("slice_index", [DType.int64, DType.int32])
    start_forms = ["given"] + (["negative"] if start < d else []) + (["INT_MIN"] if start == 0 else [])
    form = g.draw("slice_start", start_forms)
    start = start - d if form == "negative" else INT_MIN[dtype] if form == "INT_MIN" else start
    end_forms = ["given"] + (["negative"] if end < d else ["INT_MAX"])
    form = g.draw("slice_end", end_forms)
    end = end - d if form == "negative" else INT_MAX[dtype] if form == "INT_MAX" else end
    shape = list(g.shape(x))
    shape[axis] = len(range(0, shape[axis])[slice(start, end, step)])
    return write_slice(g, x, axis, start, end, step, shape, dtype)


@onnx_lowers(C.Slice)
def _slice(op, g, x):
    return slice_axis(g, x, op.axis, op.start, op.end, op.step)


@onnx_lowers(C.Concat)
def _concat(op, g, *xs):
    return g.op("Concat", *xs, axis=g.axis(op.axis, g.rank(xs[0])))


def _implied_sizes(dim: int, sizes: List[int], opset: int) -> Optional[str]:
    """How Split can leave ``sizes`` out on a dim of ``dim``, if at all: with neither input nor
    attribute (equal parts, before opset 18), or with ``num_outputs`` (opset 18: pieces of
    ceil(dim / n), the last one smaller)."""
    n = len(sizes)
    if opset < 18:
        return "equal" if all(s * n == dim for s in sizes) else None
    return "num_outputs" if _num_outputs_sizes(dim, n) == list(sizes) else None


def _num_outputs_sizes(dim: int, n: int) -> List[int]:
    """The piece sizes of Split(num_outputs=n) on a dim: ceil(dim / n) each, the rest in the last."""
    part = -(-dim // n)
    return [part] * (n - 1) + [dim - part * (n - 1)]


@onnx_lowers(C.Split)
def _split(op, g, x):
    """One Split node, or one Slice per piece (drawn)."""
    n, dim, rank = len(op.sizes), g.shape(x)[op.axis], g.rank(x)
    if g.flip("split", "Slices", "Split"):
        cuts = np.cumsum([0] + list(op.sizes))
        return [slice_axis(g, x, op.axis, int(b), int(e)) for b, e in zip(cuts[:-1], cuts[1:])]
    axis = g.axis(op.axis, rank)
    implied = _implied_sizes(dim, list(op.sizes), g.opset)
    if implied is not None and g.flip("split_sizes", "implied", "given"):
        if implied == "num_outputs":
            return g.op("Split", x, axis=axis, num_outputs=n, outputs=n)
        return g.op("Split", x, axis=axis, outputs=n)
    return g.op("Split", x, g.shape_operand(op.sizes, x), axis=axis, outputs=n)


@onnx_lowers(C.Gather)
def _gather(op, g, x):
    """Gather with the op's indices as a constant: int64 or int32, each positive or counted from the
    end (drawn: all positive, all negative, or some of each)."""
    d = g.shape(x)[op.axis]
    idx = np.asarray(op.indices, dtype=np.int64)
    form = g.draw("indices", ["positive", "negative", "mixed"])
    if form == "negative":
        idx = idx - d
    elif form == "mixed":
        idx = np.where(g.rng.integers(0, 2, size=idx.shape) == 1, idx - d, idx)
    dtype = g.draw("index_type", [DType.int64, DType.int32])
    if g.flip("gather", "GatherND", "Gather"):
        return _gather_nd(op, g, x, idx)
    return g.op("Gather", x, g.const(idx, dtype, "idx"), axis=g.axis(op.axis, g.rank(x)))


def _gather_nd(op, g, x, idx: np.ndarray) -> str:
    """Gather on axis a as GatherND with batch_dims=a: the indices broadcast over x's first a dims,
    each entry a 1-tuple (a trailing dim of 1), so GatherND reads x[b..., i, ...] like Gather (its
    indices are int64 only)."""
    lead = tuple(g.shape(x)[:op.axis])
    nd = np.broadcast_to(idx, lead + idx.shape)[..., None]
    out = lead + idx.shape + tuple(g.shape(x)[op.axis + 1:])
    batch = {"batch_dims": op.axis} if op.axis or g.flip("batch_dims", "given", "omitted") else {}
    return g.op("GatherND", x, g.const(np.ascontiguousarray(nd), DType.int64, "idx"), shape=out, **batch)
