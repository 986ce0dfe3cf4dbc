"""Ops with ONNX semantics that pick, place or number elements by index: TopK, GatherElements,
ScatterElements, ScatterND, OneHot, Range and ReverseSequence.

Every index tensor these ops need (gather/scatter indices, sequence lengths) is a constant built from
the op's attributes and the concrete shapes by the functions at the end of this file: in range and,
where duplicates would be undefined, distinct BY CONSTRUCTION, whatever the input values. ``pick``
chooses among several such patterns. The numpy eval and every lowering call them, so all read the
same indices; the ONNX lowerings bake them into the model as constants.
"""
import math
from typing import Sequence

import numpy as np

from nnfuzz.abstract.accuracy import Accuracy, EXACT
from nnfuzz.abstract.arith import If, Or, select
from nnfuzz.abstract.dtype import DTYPE_ALL, DTYPE_FLOATS, DTYPE_INTS, DTYPE_NUMERIC, DType
from nnfuzz.abstract.kink import Kink
from nnfuzz.abstract.op import MAX_RANK, AbsOpBase, ranks
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError

PICKS = (0, 1, 2, 3)
# ONNX Range before opset 27 (float16/bfloat16 came then)
RANGE_DTYPES = (DType.float32, DType.float64, DType.int16, DType.int32, DType.int64)
# ScatterElements/ScatterND ``reduction`` -> the dtypes it is offered on (mul: floats, an integer
# product overflows after a few factors)
REDUCTIONS = {"none": DTYPE_ALL, "add": DTYPE_NUMERIC, "mul": DTYPE_FLOATS, "max": DTYPE_NUMERIC,
              "min": DTYPE_NUMERIC}


def _axis_in_range(axis, x):
    return [0 <= axis, axis < x.ndims]


def _with_dim(shape, axis, n):
    return [If(i == axis, n, d) for i, d in enumerate(shape)]


class TopK(AbsOpBase):
    """The ``k`` largest (``largest``) or smallest entries along ``axis``, sorted, and their int64
    indices. Equal entries come lower index first (ONNX's rule; torch's topk leaves ties unordered,
    so the torch lowering sorts stably). Near-equal floats are precision noise, as for ArgMax: the
    jittered twin runs flip them, and the oracle does not compare indices that the flips move.
    ONNX's ``sorted=0`` leaves the order undefined, so the op is always sorted; the ONNX lowering
    writes sorted=0 only where k == 1."""
    accuracy = EXACT
    family = "indexing"
    in_dtypes = [(d,) for d in DTYPE_NUMERIC]
    out_dtypes = [(d, DType.int64) for d in DTYPE_NUMERIC]
    inp_ranks = [ranks(1)]
    out_ranks = [ranks(1), ranks(1)]
    attr_choices = {"largest": (True, False)}
    attr_kinds = {"axis": "index", "k": "size"}
    kinks = {0: Kink(ranked="axis", top="k", largest="largest")}  # the values' gradient goes to the indices
    indexes = {1: 0}  # output 1 holds indices into input 0 along ``axis`` (triage/local_error.py: ties)

    def __init__(self, axis, k, *, largest):
        self.axis, self.k, self.largest = axis, k, largest

    def requires(self, inputs):
        (x,) = inputs
        return _axis_in_range(self.axis, x) + [1 <= self.k, self.k <= select(x.shape, self.axis)]

    def type_transfer(self, inputs):
        (x,) = inputs
        shape = _with_dim(x.shape, self.axis, self.k)
        dt = self.out_dtypes_for(inputs)
        return [AbsTensor(shape, dt[0]), AbsTensor(list(shape), dt[1])]


class GatherElements(AbsOpBase):
    """out[p] = x[p with its ``axis`` coordinate replaced by idx[p]]; idx (constant, in range, repeats
    allowed) has x's shape except ``n`` along the axis."""
    accuracy = EXACT
    family = "indexing"
    in_dtypes = [(d,) for d in DTYPE_ALL]
    out_dtypes = [(d,) for d in DTYPE_ALL]
    inp_ranks = [ranks(1)]
    out_ranks = [ranks(1)]
    attr_choices = {"pick": PICKS}
    attr_kinds = {"axis": "index", "n": "size"}

    def __init__(self, axis, n, *, pick):
        self.axis, self.n, self.pick = axis, n, pick

    def requires(self, inputs):
        return _axis_in_range(self.axis, inputs[0]) + [self.n >= 1]

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(_with_dim(x.shape, self.axis, self.n), self.out_dtypes_for(inputs)[0])]


class ScatterElements(AbsOpBase):
    """A copy of ``data`` where each entry of ``updates`` goes to its own position with the ``axis``
    coordinate replaced by idx[p] (idx constant, of updates' shape). ``updates`` has data's shape
    except along the axis. With ``reduction="none"`` repeated targets are undefined, so idx is distinct
    along the axis (updates' axis dim <= data's); with add/mul/max/min (ONNX opset 16/18) the target is
    combined with every update sent to it, so idx repeats."""
    accuracy = Accuracy(4)  # add/mul round once per update, repeated targets in any order (docs/accuracy.md)
    family = "indexing"
    in_dtypes = [(d, d) for d in DTYPE_ALL]
    out_dtypes = [(d,) for d in DTYPE_ALL]
    inp_ranks = [ranks(1), ranks(1)]
    out_ranks = [ranks(1)]
    same_inp_dims = True
    attr_choices = {"reduction": tuple(REDUCTIONS), "pick": PICKS}
    attr_kinds = {"axis": "index"}

    def __init__(self, axis, *, reduction, pick):
        self.axis, self.reduction, self.pick = axis, reduction, pick
        self.in_dtypes = [(d, d) for d in REDUCTIONS[reduction]]
        self.out_dtypes = [(d,) for d in REDUCTIONS[reduction]]

    def requires(self, inputs):
        data, upd = inputs
        same = [Or(i == self.axis, u == d) for i, (u, d) in enumerate(zip(upd.shape, data.shape))]
        fits = [select(upd.shape, self.axis) <= select(data.shape, self.axis)] if self.reduction == "none" else []
        return _axis_in_range(self.axis, data) + same + fits

    def type_transfer(self, inputs):
        return [AbsTensor(inputs[0].shape, self.out_dtypes_for(inputs)[0])]


class ScatterND(AbsOpBase):
    """A copy of ``data`` where ``n`` distinct index tuples (constant, ``[n, k]``, into data's first
    ``k`` dims) each receive a slice of ``updates`` (``[n] + data.shape[k:]``), or combine with it
    (``reduction``, ONNX opset 16/18). Distinct by construction: needs n <= data.shape[0]. Ranks are
    per instance: data has ``k + tail`` dims, updates ``1 + tail``."""
    accuracy = Accuracy(2)  # add/mul round: 0.5..0.6 ulps measured on all three systems (docs/accuracy.md)
    family = "indexing"
    in_dtypes = [(d, d) for d in DTYPE_ALL]
    out_dtypes = [(d,) for d in DTYPE_ALL]
    inp_ranks = [ranks(1), ranks(1)]
    out_ranks = [ranks(1)]
    attr_choices = {"k": (1, 2, 3), "tail": (0, 1, 2), "reduction": tuple(REDUCTIONS), "pick": PICKS}

    def __init__(self, *, k, tail, reduction, pick):
        self.k, self.tail, self.reduction, self.pick = k, tail, reduction, pick
        self.inp_ranks = [(k + tail,), (1 + tail,)]
        self.out_ranks = [(k + tail,)]
        self.in_dtypes = [(d, d) for d in REDUCTIONS[reduction]]
        self.out_dtypes = [(d,) for d in REDUCTIONS[reduction]]

    def requires(self, inputs):
        data, upd = inputs
        n = upd.shape[0]
        return [n <= data.shape[0]] + [u == d for u, d in zip(upd.shape[1:], data.shape[self.k:])]

    def type_transfer(self, inputs):
        return [AbsTensor(inputs[0].shape, self.out_dtypes_for(inputs)[0])]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        dt = self._pick_in_row([outputs[0].dtype], rng)
        return [(self.k + self.tail, dt[0]), (1 + self.tail, dt[1])]


class OneHot(AbsOpBase):
    """Integer indices -> a new dim of size ``depth`` at ``axis`` holding ``values[1]`` where the dim's
    position equals the index and ``values[0]`` elsewhere (ONNX: a negative index counts from the end,
    one outside [-depth, depth) gives a row of ``values[0]``; defined for every input value). The output
    dtype is ``dtype``."""
    accuracy = EXACT
    family = "indexing"
    in_dtypes = [(i,) for i in DTYPE_INTS for o in DTYPE_NUMERIC]
    out_dtypes = [(o,) for i in DTYPE_INTS for o in DTYPE_NUMERIC]
    inp_ranks = [ranks(1, MAX_RANK - 1)]  # ONNX OneHot: indices of rank >= 1
    out_ranks = [ranks(1)]
    attr_choices = {"values": ((0, 1), (1, 0), (3, 7), (5, 2)), "dtype": DTYPE_NUMERIC}
    attr_kinds = {"axis": "index", "depth": "size"}

    def __init__(self, axis, depth, *, values, dtype):
        self.axis, self.depth, self.values, self.dtype = axis, depth, tuple(values), dtype
        self.in_dtypes = [(i,) for i in DTYPE_INTS]
        self.out_dtypes = [(dtype,)] * len(DTYPE_INTS)

    def requires(self, inputs):
        (x,) = inputs
        return [0 <= self.axis, self.axis <= x.ndims, self.depth >= 1]

    def type_transfer(self, inputs):
        (x,) = inputs
        s, a, r = x.shape, self.axis, x.ndims
        shape = []
        for j in range(r + 1):  # output dim j: the new dim at the axis, input dim j before it, j - 1 after
            before, after = (s[j] if j < r else None), (s[j - 1] if j else None)
            rest = after if before is None else before if after is None else If(a > j, before, after)
            shape.append(self.depth if rest is None else If(a == j, self.depth, rest))
        return [AbsTensor(shape, self.dtype)]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        rank = outputs[0].ndims - 1
        if rank not in self.inp_ranks[0] or outputs[0].dtype is not self.dtype:
            raise ConstraintError(f"OneHot(dtype={self.dtype}) cannot make {outputs[0]}")
        return [(rank, self._pick_in_row([self.dtype], rng)[0])]


class Range(AbsOpBase):
    """ONNX Range with constant ``start`` and ``delta`` and as many entries as dim ``axis`` of the input
    X has: [start, start + delta, ...] of ``dtype`` (X's values are not read; its dim is the count,
    which the ONNX lowering may also read from the graph, as models write arange(x.shape[1])). The op
    takes X because a graph needs an input to grow from: an op without inputs cannot be inserted."""
    accuracy = Accuracy(64)  # start + i * delta, or a running sum of delta: an ulp per step
    family = "indexing"
    in_dtypes = [(d,) for d in DTYPE_ALL]
    out_dtypes = [(DType.int64,) for d in DTYPE_ALL]
    inp_ranks = [ranks(1)]
    out_ranks = [(1,)]
    attr_choices = {"delta": (1, 2, -1, -3, 0.5, -0.25), "dtype": RANGE_DTYPES}
    attr_kinds = {"axis": "index", "start": "pad"}

    def __init__(self, axis, start, *, delta, dtype):
        if dtype.is_int and delta != int(delta):
            raise ConstraintError(f"Range: a {dtype} range cannot step by {delta}")
        self.axis, self.start, self.delta, self.dtype = axis, start, delta, dtype
        self.in_dtypes = [(d,) for d in DTYPE_ALL]
        self.out_dtypes = [(dtype,)] * len(DTYPE_ALL)

    def requires(self, inputs):
        (x,) = inputs
        n = select(x.shape, self.axis)
        # |start| and |delta| * n small: the last entry fits int16 and is exact in every float type
        return _axis_in_range(self.axis, x) + [-64 <= self.start, self.start <= 64,
                                               n * max(1, int(abs(self.delta))) <= 30000]

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor([select(x.shape, self.axis)], self.dtype)]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        if outputs[0].dtype is not self.dtype:
            raise ConstraintError(f"Range(dtype={self.dtype}) cannot make {outputs[0]}")
        return [(rng.choice((1, 2, 3)) if rng is not None else 1, self._pick_in_row([self.dtype], rng)[0])]


class ReverseSequence(AbsOpBase):
    """Along the time axis (0 or 1, the other of ``batch_axis``), reverse the first lens[b] entries of
    each batch entry b and keep the rest; lens (constant, int64, in [1, T]) come from ``pick``."""
    accuracy = EXACT
    family = "indexing"
    in_dtypes = [(d,) for d in DTYPE_ALL]
    out_dtypes = [(d,) for d in DTYPE_ALL]
    inp_ranks = [ranks(2)]
    out_ranks = [ranks(2)]
    attr_choices = {"batch_axis": (0, 1), "pick": PICKS}

    def __init__(self, *, batch_axis, pick):
        self.batch_axis, self.pick = batch_axis, pick
        self.time_axis = 1 - batch_axis

    def type_transfer(self, inputs):
        return [AbsTensor(inputs[0].shape, self.out_dtypes_for(inputs)[0])]


# ---- the constant index tensors (numpy) ------------------------------------------------------------

def _scramble(n: int, pick: int) -> np.ndarray:
    """n deterministic, well-spread non-negative ints (a multiplicative hash of 0..n-1 and ``pick``)."""
    k = np.arange(n, dtype=np.uint64)
    h = (k * np.uint64(2654435761) + np.uint64(40503 * pick + 17)) % np.uint64(1 << 32)
    return (h >> np.uint64(8)).astype(np.int64)


def gather_indices(shape: Sequence[int], bound: int, pick: int) -> np.ndarray:
    """An int64 tensor of ``shape`` with entries in [0, bound), repeats allowed."""
    n = int(np.prod(shape, dtype=np.int64))
    return (_scramble(n, pick) % bound).reshape(tuple(shape))


def distinct_indices(shape: Sequence[int], axis: int, bound: int, pick: int) -> np.ndarray:
    """An int64 tensor of ``shape`` with entries in [0, bound), distinct along ``axis`` (needs
    ``shape[axis] <= bound``): each line along the axis is a rotation of 0..bound-1, forward or
    backward (``pick``'s parity), cut to its length."""
    if shape[axis] > bound:
        raise ValueError(f"{shape[axis]} distinct indices along axis {axis} cannot lie in [0, {bound})")
    offset = np.take(gather_indices(shape, bound, pick), [0], axis=axis)
    along = np.indices(tuple(shape), dtype=np.int64)[axis]
    sign = 1 if pick % 2 == 0 else -1
    return (offset + sign * along) % bound


def scatter_element_indices(op, data_shape, upd_shape) -> np.ndarray:
    """ScatterElements' indices (of ``upd_shape``, into dim ``op.axis`` of data): distinct along the
    axis without a reduction (repeated targets are undefined there), repeats with one."""
    shape, bound = [int(d) for d in upd_shape], int(data_shape[op.axis])
    if op.reduction == "none":
        return distinct_indices(shape, op.axis, bound, op.pick)
    return gather_indices(shape, bound, op.pick)


def nd_positions(lead: Sequence[int], n: int, pick: int) -> np.ndarray:
    """``n`` distinct index tuples into a tensor whose leading dims are ``lead``, as int64 ``[n, len(lead)]``:
    an arithmetic walk through the flattened positions with a step coprime to their count."""
    count = int(np.prod(lead, dtype=np.int64))
    if n > count:
        raise ValueError(f"{n} distinct positions do not fit in dims {list(lead)}")
    step = next(s for s in range(max(1, (count * 5) // 8), count + 2) if math.gcd(s, count) == 1)
    start = int(_scramble(1, pick)[0]) % count
    flat = (start + step * np.arange(n, dtype=np.int64)) % count
    return np.stack(np.unravel_index(flat, tuple(lead)), axis=-1).astype(np.int64).reshape(n, len(lead))


def sequence_lens(batch: int, time: int, pick: int) -> np.ndarray:
    """ReverseSequence's lengths: int64 ``[batch]`` in [1, time], the first one ``time`` (a whole reversal)."""
    lens = 1 + _scramble(batch, pick) % time
    lens[0] = time
    return lens


def full_coords(idx: np.ndarray, axis: int) -> np.ndarray:
    """Index tuples ``[*idx.shape, rank]`` that address, for each entry of ``idx`` (indices along
    ``axis``), the element at its own position with the axis coordinate replaced by the entry."""
    grid = np.indices(idx.shape, dtype=np.int64)
    grid[axis] = idx
    return np.moveaxis(grid, 0, -1)
