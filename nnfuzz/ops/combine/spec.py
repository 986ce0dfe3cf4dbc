"""Join, split and pick parts of tensors along one axis. Every dtype is accepted and kept.

Concat's input count is a discrete attribute and Split's output count is the number of its ``sizes``,
so one class covers all counts; the instance sets its own rank and dtype tables for that count.
"""
from nnfuzz.abstract.accuracy import EXACT
from nnfuzz.abstract.arith import If, Or, cdiv, divisor, select
from nnfuzz.abstract.dtype import DTYPE_ALL
from nnfuzz.abstract.op import AbsOpBase, ranks
from nnfuzz.abstract.tensor import AbsTensor


def _axis_in_range(axis, x):
    return [0 <= axis, axis < x.ndims]


class Concat(AbsOpBase):
    """Join ``arity`` tensors along ``axis``; every other dim must agree."""
    qdq = "compute"
    accuracy = EXACT
    family = "combine"
    in_dtypes = [(d, d) for d in DTYPE_ALL]  # arity 2; __init__ sets the rows for its own arity
    out_dtypes = [(d,) for d in DTYPE_ALL]
    inp_ranks = [ranks(1)] * 2
    out_ranks = [ranks(1)]
    same_inp_dims = True
    attr_choices = {"arity": (2, 3, 4)}
    attr_kinds = {"axis": "index"}

    def __init__(self, axis, *, arity):
        self.axis, self.arity = axis, arity
        self.inp_ranks = [ranks(1)] * arity
        self.in_dtypes = [(d,) * arity for d in DTYPE_ALL]

    def requires(self, inputs):
        x0 = inputs[0]
        same = [Or(i == self.axis, x.shape[i] == x0.shape[i]) for x in inputs[1:] for i in range(x0.ndims)]
        return _axis_in_range(self.axis, x0) + same

    def type_transfer(self, inputs):
        x0 = inputs[0]
        shape = [If(i == self.axis, sum(x.shape[i] for x in inputs), x0.shape[i]) for i in range(x0.ndims)]
        return [AbsTensor(shape, self.out_dtypes_for(inputs)[0])]


class Split(AbsOpBase):
    """Cut X along ``axis`` into consecutive pieces of the given ``sizes`` (they sum to the dim);
    one output per piece. Equal sizes are one solution among many."""
    qdq = "same"
    accuracy = EXACT
    family = "combine"
    in_dtypes = [(d,) for d in DTYPE_ALL]
    out_dtypes = [(d, d) for d in DTYPE_ALL]  # 2 pieces; __init__ sets the rows for its own count
    inp_ranks = [ranks(1)]
    out_ranks = [ranks(1)] * 2
    num_var_param = [2, 3, 4]
    attr_kinds = {"axis": "index", "sizes": "size"}

    def __init__(self, axis, *sizes):
        self.axis, self.sizes = axis, list(sizes)
        self.out_ranks = [ranks(1)] * len(sizes)
        self.out_dtypes = [(d,) * len(sizes) for d in DTYPE_ALL]

    def requires(self, inputs):
        (x,) = inputs
        return _axis_in_range(self.axis, x) + [s >= 1 for s in self.sizes] + [
            sum(self.sizes) == select(x.shape, self.axis)
        ]

    def type_transfer(self, inputs):
        (x,) = inputs
        dt = self.out_dtypes_for(inputs)
        return [AbsTensor([If(i == self.axis, s, d) for i, d in enumerate(x.shape)], dt[k])
                for k, s in enumerate(self.sizes)]


class Slice(AbsOpBase):
    """X[..., start:end:step, ...] on one axis, with 0 <= start < end <= dim and step >= 1."""
    qdq = "same"
    accuracy = EXACT
    family = "combine"
    in_dtypes = [(d,) for d in DTYPE_ALL]
    out_dtypes = [(d,) for d in DTYPE_ALL]
    inp_ranks = [ranks(1)]
    out_ranks = [ranks(1)]
    attr_kinds = {"axis": "index", "start": "pad", "end": "size", "step": "size"}  # start may be 0

    def __init__(self, axis, start, end, step):
        self.axis, self.start, self.end, self.step = axis, start, end, step

    def requires(self, inputs):
        (x,) = inputs
        d = select(x.shape, self.axis)
        return _axis_in_range(self.axis, x) + [
            0 <= self.start, self.start < self.end, self.end <= d, self.step >= 1,
        ]

    def type_transfer(self, inputs):
        (x,) = inputs
        n = cdiv(self.end - self.start, divisor(self.step))
        shape = [If(i == self.axis, n, d) for i, d in enumerate(x.shape)]
        return [AbsTensor(shape, self.out_dtypes_for(inputs)[0])]


class Gather(AbsOpBase):
    """Pick the entries ``indices`` (in range, repeats allowed) along ``axis``.

    The indices are attributes that the lowering bakes into a constant int64 tensor, so every
    model is valid whatever its input values (random index inputs would fall out of range).
    """
    accuracy = EXACT
    family = "combine"
    in_dtypes = [(d,) for d in DTYPE_ALL]
    out_dtypes = [(d,) for d in DTYPE_ALL]
    inp_ranks = [ranks(1)]
    out_ranks = [ranks(1)]
    num_var_param = [1, 2, 3, 4]
    attr_kinds = {"axis": "index", "indices": "pad"}  # positions in a dim (0 included), not axes

    def __init__(self, axis, *indices):
        self.axis, self.indices = axis, list(indices)

    def requires(self, inputs):
        (x,) = inputs
        d = select(x.shape, self.axis)
        return _axis_in_range(self.axis, x) + [0 <= i for i in self.indices] + [i < d for i in self.indices]

    def type_transfer(self, inputs):
        (x,) = inputs
        shape = [If(i == self.axis, len(self.indices), d) for i, d in enumerate(x.shape)]
        return [AbsTensor(shape, self.out_dtypes_for(inputs)[0])]
