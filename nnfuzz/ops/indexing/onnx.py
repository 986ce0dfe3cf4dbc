"""ONNX lowerings of the indexing ops: one node each (Range: plus the nodes that compute its limit when
that spelling is drawn). Index tensors are constants from ``spec.py``, the same the torch lowerings
read; drawn spellings: index dtype int32/int64 and entries counted from the end where ONNX allows it,
default attributes omitted or written, K / limit / depth computed in the graph or constant."""
import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.indexing import spec as I

# the first opset whose ScatterElements / ScatterND take each reduction
REDUCTION_SINCE = {"add": 16, "mul": 16, "max": 18, "min": 18}


def _indices(g, idx: np.ndarray, bound: int) -> str:
    """GatherElements/ScatterElements indices: int64 or int32, all, some or none counted from the end
    (index - bound), as ONNX reads them."""
    form = g.draw("indices", ["non-negative", "negative", "mixed"])
    if form == "negative":
        idx = idx - bound
    elif form == "mixed":
        idx = np.where(idx % 2 == 1, idx - bound, idx)
    dt = g.draw("index_dtype", [DType.int64, DType.int32])
    return g.const(idx.astype(dt.numpy()), dt, "idx")


def _default_or(g, key, value, default, attrs, name):
    """Write attribute ``name`` unless it is ``default`` and the draw leaves it out."""
    if value != default or g.flip(key, "explicit", "default"):
        attrs[name] = value


@onnx_lowers(I.TopK)
def _topk(op, g, x):
    rank = g.rank(x)
    attrs = {}
    if op.axis != rank - 1 or g.flip("axis_attr", "explicit", "default"):
        attrs["axis"] = g.axis(op.axis, rank)
    _default_or(g, "largest", int(op.largest), 1, attrs, "largest")
    how = g.draw("sorted", ["default", "explicit", "unsorted"] if op.k == 1 else ["default", "explicit"])
    if how != "default":
        attrs["sorted"] = int(how == "explicit")  # sorted=0 leaves the order open: one entry has one
    k = g.shape_operand([op.k], x)
    shape = [op.k if i == op.axis else d for i, d in enumerate(g.shape(x))]
    return g.op("TopK", x, k, outputs=2, shape=shape, **attrs)


@onnx_lowers(I.GatherElements)
def _gather_elements(op, g, x):
    shape = [op.n if i == op.axis else d for i, d in enumerate(g.shape(x))]
    bound = g.shape(x)[op.axis]
    idx = _indices(g, I.gather_indices(shape, bound, op.pick), bound)
    attrs = {}
    _default_or(g, "axis_attr", g.axis(op.axis, g.rank(x)), 0, attrs, "axis")
    return g.op("GatherElements", x, idx, shape=shape, **attrs)


def _reduction(g, op, attrs, what):
    if op.reduction != "none":
        g.need_opset(REDUCTION_SINCE[op.reduction], f"{what} reduction={op.reduction}")
        attrs["reduction"] = op.reduction
    elif g.opset >= 16 and g.flip("reduction", "explicit", "default"):
        attrs["reduction"] = "none"


@onnx_lowers(I.ScatterElements)
def _scatter_elements(op, g, data, upd):
    bound = g.shape(data)[op.axis]
    idx = _indices(g, I.scatter_element_indices(op, g.shape(data), g.shape(upd)), bound)
    attrs = {}
    _default_or(g, "axis_attr", g.axis(op.axis, g.rank(data)), 0, attrs, "axis")
    _reduction(g, op, attrs, "ScatterElements")
    return g.op("ScatterElements", data, idx, upd, shape=g.shape(data), **attrs)


@onnx_lowers(I.ScatterND)
def _scatter_nd(op, g, data, upd):
    pos = I.nd_positions(g.shape(data)[:op.k], g.shape(upd)[0], op.pick)
    attrs = {}
    _reduction(g, op, attrs, "ScatterND")
    return g.op("ScatterND", data, g.const(pos, DType.int64, "idx"), upd, shape=g.shape(data), **attrs)


@onnx_lowers(I.OneHot)
def _one_hot(op, g, x):
    """Integer indices as they are, or cast to int64 first (exact: the same indices)."""
    if g.flip("indices", "int64", "as-is"):
        x = g.cast(x, DType.int64)
    r = g.rank(x)
    one = g.flip("depth", "1-element", "0-d")
    depth = g.ints([op.depth], "depth") if one else g.scalar(op.depth, DType.int64, "depth")
    values = g.const(np.asarray(op.values), op.dtype, "values")
    attrs = {}
    if op.axis != r or g.flip("axis_attr", "explicit", "default"):
        attrs["axis"] = g.axis(op.axis, r + 1)
    shape = list(g.shape(x))
    shape.insert(op.axis, op.depth)
    return g.op("OneHot", x, depth, values, shape=shape, **attrs)


def _limit_slack(g, op) -> float:
    """How far short of start + n * delta the limit may stop and still give n entries (drawn)."""
    step = abs(op.delta)
    if op.dtype.is_float:
        return g.draw("limit_slack", [0.0, step / 2])
    return g.draw("limit_slack", [0, int(step) - 1]) if step > 1 else 0


@onnx_lowers(I.Range)
def _range(op, g, x):
    """Range(start, limit, delta) with limit = start + n * delta (less a slack under one delta): a
    constant, or computed from dim ``axis`` of X's Shape."""
    dt, n = op.dtype, g.shape(x)[op.axis]
    start, delta = g.scalar(op.start, dt, "start"), g.scalar(op.delta, dt, "delta")
    slack = _limit_slack(g, op) * (1 if op.delta > 0 else -1)
    if g.draw("limit", ["constant", "computed"]) == "constant":
        limit = g.scalar(op.start + n * op.delta - slack, dt, "limit")
    else:
        dim = g.op("Gather", g.op("Shape", x, shape=(g.rank(x),)), g.scalar(op.axis, DType.int64), axis=0, shape=())
        span = g.op("Mul", g.cast(dim, dt), delta, shape=())
        limit = g.op("Add", start, span, shape=())
        if slack:
            limit = g.op("Sub", limit, g.scalar(slack, dt), shape=())
    return g.op("Range", start, limit, delta, shape=(n,))


def reversed_positions(lens: np.ndarray, shape, batch_axis: int) -> np.ndarray:
    """For each element of x (batch and time on dims 0 and 1), the time index ReverseSequence reads it
    from: lens[b] - 1 - t for t < lens[b], t itself after; the same along x's other dims."""
    t = np.arange(shape[1 - batch_axis], dtype=np.int64)[None, :]
    n = lens.astype(np.int64)[:, None]
    idx = np.where(t < n, n - 1 - t, t)
    idx = idx if batch_axis == 0 else idx.T
    return np.ascontiguousarray(np.broadcast_to(idx.reshape(idx.shape + (1,) * (len(shape) - 2)), tuple(shape)))


@onnx_lowers(I.ReverseSequence)
def _reverse_sequence(op, g, x):
    """ReverseSequence, or GatherElements along the time axis with the positions it reads (drawn)."""
    shape = g.shape(x)
    lens = I.sequence_lens(shape[op.batch_axis], shape[op.time_axis], op.pick)
    if g.flip("reverse_sequence", "GatherElements", "ReverseSequence"):
        idx = _indices(g, reversed_positions(lens, shape, op.batch_axis), shape[op.time_axis])
        return g.op("GatherElements", x, idx, axis=g.axis(op.time_axis, len(shape)), shape=shape)
    attrs = {}
    if op.batch_axis != 1 or g.flip("axes", "explicit", "default"):
        attrs = {"batch_axis": op.batch_axis, "time_axis": op.time_axis}
    return g.op("ReverseSequence", x, g.const(lens, DType.int64, "lens"), shape=shape, **attrs)
