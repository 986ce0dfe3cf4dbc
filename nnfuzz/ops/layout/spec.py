"""Layout operators: they move, copy or mask elements without computing new values.

Every op here accepts every dtype (bool included) and keeps it. Axes are non-negative indices.
"""
from nnfuzz.abstract.accuracy import EXACT
from nnfuzz.abstract.arith import If, Or, distinct, divisible, divisor, fdiv, prod, select
from nnfuzz.abstract.dtype import DTYPE_ALL
from nnfuzz.abstract.op import MAX_RANK, RANK_ALL, AbsOpBase, ranks
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError


class LayoutOp(AbsOpBase, abstract=True):
    accuracy = EXACT
    family = "layout"
    in_dtypes = [(d,) for d in DTYPE_ALL]
    out_dtypes = [(d,) for d in DTYPE_ALL]

    def out(self, inputs, shape):
        return [AbsTensor(shape, self.out_dtypes_for(inputs)[0])]




def _pick_rank(viable, rng):
    viable = list(viable)
    if not viable:
        raise ConstraintError("no viable input rank")
    return viable[rng.randrange(len(viable))] if rng is not None else viable[0]


class Reshape(LayoutOp):
    """Y has the target ``shape``; the element count is unchanged."""
    qdq = "same"
    out_ranks = [ranks(1)]
    num_var_param = [1, 2, 3, 4, 5]

    def __init__(self, *shape):
        self.shape = list(shape)
        self.out_ranks = [(len(shape),)]

    def requires(self, inputs):
        (x,) = inputs
        return [s >= 1 for s in self.shape] + [prod(x.shape) == prod(self.shape)]

    def type_transfer(self, inputs):
        return self.out(inputs, self.shape)

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        (y,) = outputs
        if y.ndims != len(self.shape):
            raise ConstraintError(f"Reshape to rank {len(self.shape)} cannot produce rank {y.ndims}")
        return [(_pick_rank(RANK_ALL, rng), self._pick_in_row([y.dtype], rng)[0])]


class Flatten(LayoutOp):
    """torch.flatten(x, start_dim=axis): dims axis.. merge into one; Y has rank axis + 1.

    ``axis`` fixes the output rank, so it is a discrete choice, not a symbolic attribute. Rank-0
    inputs are excluded: the TorchScript exporter then loses the [1] shape and a later Squeeze
    exports as a no-op.
    """
    qdq = "same"
    out_ranks = [ranks(1, 4)]
    attr_choices = {"axis": (0, 1, 2, 3)}

    def __init__(self, *, axis):
        self.axis = axis
        self.inp_ranks = [ranks(max(1, axis + 1))]
        self.out_ranks = [(axis + 1,)]

    def type_transfer(self, inputs):
        (x,) = inputs
        return self.out(inputs, x.shape[:self.axis] + [prod(x.shape[self.axis:])])

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        (y,) = outputs
        if y.ndims != self.axis + 1:
            raise ConstraintError(f"Flatten(axis={self.axis}) cannot produce rank {y.ndims}")
        return [(_pick_rank(self.inp_ranks[0], rng), self._pick_in_row([y.dtype], rng)[0])]


class Transpose(LayoutOp):
    """Swap two axes, dim0 < dim1."""
    qdq = "same"
    inp_ranks = [ranks(2)]
    out_ranks = [ranks(2)]
    attr_kinds = {"dim0": "index", "dim1": "index"}

    def __init__(self, dim0, dim1):
        self.dim0, self.dim1 = dim0, dim1

    def requires(self, inputs):
        (x,) = inputs
        return [0 <= self.dim0, self.dim0 < self.dim1, self.dim1 < x.ndims]

    def type_transfer(self, inputs):
        (x,) = inputs
        s = x.shape
        a, b = select(s, self.dim0), select(s, self.dim1)
        return self.out(inputs, [If(i == self.dim0, b, If(i == self.dim1, a, s[i])) for i in range(x.ndims)])


class Permute(LayoutOp):
    """Y.shape[i] = X.shape[perm[i]]; perm is a permutation of 0..rank-1."""
    qdq = "same"
    inp_ranks = out_ranks = [ranks(2)]  # each instance: rank len(perm)
    num_var_param = [2, 3, 4, 5]
    attr_kinds = {"perm": "index"}

    def __init__(self, *perm):
        self.perm = list(perm)
        self.inp_ranks = [(len(perm),)]
        self.out_ranks = [(len(perm),)]

    def requires(self, inputs):
        n = len(self.perm)
        return [distinct(self.perm)] + [p >= 0 for p in self.perm] + [p < n for p in self.perm]

    def type_transfer(self, inputs):
        (x,) = inputs
        return self.out(inputs, [select(x.shape, p) for p in self.perm])


class Squeeze(LayoutOp):
    """Remove one axis whose dim is 1."""
    qdq = "same"
    inp_ranks = [ranks(1)]
    out_ranks = [ranks(0, MAX_RANK - 1)]
    attr_kinds = {"axis": "index"}

    def __init__(self, axis):
        self.axis = axis

    def requires(self, inputs):
        (x,) = inputs
        return [0 <= self.axis, self.axis < x.ndims, select(x.shape, self.axis) == 1]

    def type_transfer(self, inputs):
        (x,) = inputs
        s = x.shape
        return self.out(inputs, [If(i < self.axis, s[i], s[i + 1]) for i in range(x.ndims - 1)])

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        (y,) = outputs
        if y.ndims + 1 > MAX_RANK:
            raise ConstraintError(f"Squeeze cannot produce rank {y.ndims}")
        return [(y.ndims + 1, self._pick_in_row([y.dtype], rng)[0])]


class Unsqueeze(LayoutOp):
    """Insert an axis of dim 1 at position ``axis`` (0..rank)."""
    qdq = "same"
    inp_ranks = [ranks(0, MAX_RANK - 1)]
    out_ranks = [ranks(1)]
    attr_kinds = {"axis": "index"}

    def __init__(self, axis):
        self.axis = axis

    def requires(self, inputs):
        (x,) = inputs
        return [0 <= self.axis, self.axis <= x.ndims]

    def type_transfer(self, inputs):
        (x,) = inputs
        s = x.shape + [1]  # the padding entry is never picked: i == rank implies i <= axis
        shape = [If(i < self.axis, s[i], If(i == self.axis, 1, s[i - 1])) for i in range(x.ndims + 1)]
        return self.out(inputs, shape)

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        (y,) = outputs
        if y.ndims == 0:
            raise ConstraintError("Unsqueeze cannot produce a scalar")
        return [(y.ndims - 1, self._pick_in_row([y.dtype], rng)[0])]


class Expand(LayoutOp):
    """Broadcast X to ``shape`` (numpy rules, right-aligned): each input dim is 1 or the target dim."""
    out_ranks = [ranks(1)]
    num_var_param = [1, 2, 3, 4, 5]

    def __init__(self, *shape):
        self.shape = list(shape)
        self.inp_ranks = [ranks(0, len(shape))]
        self.out_ranks = [(len(shape),)]

    def requires(self, inputs):
        (x,) = inputs
        lead = len(self.shape) - x.ndims
        return [s >= 1 for s in self.shape] + [
            Or(d == 1, d == self.shape[lead + i]) for i, d in enumerate(x.shape)
        ]

    def type_transfer(self, inputs):
        return self.out(inputs, self.shape)

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        (y,) = outputs
        if y.ndims != len(self.shape):
            raise ConstraintError(f"Expand to rank {len(self.shape)} cannot produce rank {y.ndims}")
        return [(_pick_rank(self.inp_ranks[0], rng), self._pick_in_row([y.dtype], rng)[0])]


class Tile(LayoutOp):
    """Repeat X ``repeats[i]`` times along axis i (one repeat count per axis)."""
    inp_ranks = out_ranks = [ranks(1)]  # each instance: rank len(repeats)
    num_var_param = [1, 2, 3, 4, 5]

    def __init__(self, *repeats):
        self.repeats = list(repeats)
        self.inp_ranks = [(len(repeats),)]
        self.out_ranks = [(len(repeats),)]

    def requires(self, inputs):
        return [r >= 1 for r in self.repeats]

    def type_transfer(self, inputs):
        (x,) = inputs
        return self.out(inputs, [d * r for d, r in zip(x.shape, self.repeats)])


class DepthToSpaceOp(LayoutOp, abstract=True):
    """NCHW: [N, C*b*b, H, W] -> [N, C, H*b, W*b]; the subclass says which input channel goes where."""
    qdq = "same"
    inp_ranks = [(4,)]
    out_ranks = [(4,)]

    def __init__(self, blocksize):
        self.blocksize = blocksize

    def requires(self, inputs):
        (x,) = inputs
        b = self.blocksize
        return [b >= 1, divisible(x.shape[1], b * b)]

    def type_transfer(self, inputs):
        (x,) = inputs
        n, c, h, w = x.shape
        b = self.blocksize
        return self.out(inputs, [n, fdiv(c, divisor(b * b)), h * b, w * b])


class DepthToSpace(DepthToSpaceOp):
    """Channel c*b*b + i*b + j goes to channel c, pixel offset (i, j) in its block (column-row-depth
    order: torch.pixel_shuffle, ONNX DepthToSpace mode CRD)."""


class DepthToSpaceDCR(DepthToSpaceOp):
    """Channel (i*b + j)*C + c goes to channel c, pixel offset (i, j) in its block (depth-column-row
    order: ONNX DepthToSpace's default mode DCR, TF's depth_to_space on NHWC)."""


class SpaceToDepth(LayoutOp):
    """NCHW: [N, C, H*b, W*b] -> [N, C*b*b, H, W] (torch.pixel_unshuffle)."""
    qdq = "same"
    inp_ranks = [(4,)]
    out_ranks = [(4,)]

    def __init__(self, blocksize):
        self.blocksize = blocksize

    def requires(self, inputs):
        (x,) = inputs
        b = self.blocksize
        return [b >= 1, divisible(x.shape[2], b), divisible(x.shape[3], b)]

    def type_transfer(self, inputs):
        (x,) = inputs
        n, c, h, w = x.shape
        b = self.blocksize
        return self.out(inputs, [n, c * b * b, fdiv(h, divisor(b)), fdiv(w, divisor(b))])


class TriangularOp(LayoutOp, abstract=True):
    """Keep the lower (Tril) or upper (Triu) triangle of the last two axes, offset by ``diagonal``;
    zero the rest. ``diagonal`` stays within [-rows, cols], past which the result no longer changes."""
    inp_ranks = [ranks(2)]
    out_ranks = [ranks(2)]
    attr_kinds = {"diagonal": "pad"}

    def __init__(self, diagonal):
        self.diagonal = diagonal

    def requires(self, inputs):
        (x,) = inputs
        return [-x.shape[-2] <= self.diagonal, self.diagonal <= x.shape[-1]]

    def type_transfer(self, inputs):
        (x,) = inputs
        return self.out(inputs, x.shape)


class Tril(TriangularOp):
    pass


class Triu(TriangularOp):
    pass


class Flip(LayoutOp):
    """Reverse the order of elements along ``axis``."""
    inp_ranks = [ranks(1)]
    out_ranks = [ranks(1)]
    attr_kinds = {"axis": "index"}

    def __init__(self, axis):
        self.axis = axis

    def requires(self, inputs):
        (x,) = inputs
        return [0 <= self.axis, self.axis < x.ndims]

    def type_transfer(self, inputs):
        (x,) = inputs
        return self.out(inputs, x.shape)


class Roll(LayoutOp):
    """Rotate elements along ``axis`` by ``shift`` positions, -dim < shift < dim.

    (The TorchScript exporter does not reduce |shift| >= dim modulo dim; ORT then disagrees.)
    """
    inp_ranks = [ranks(1)]
    out_ranks = [ranks(1)]
    attr_kinds = {"shift": "pad", "axis": "index"}

    def __init__(self, shift, axis):
        self.shift, self.axis = shift, axis

    def requires(self, inputs):
        (x,) = inputs
        d = select(x.shape, self.axis)
        return [0 <= self.axis, self.axis < x.ndims, -d < self.shift, self.shift < d]

    def type_transfer(self, inputs):
        (x,) = inputs
        return self.out(inputs, x.shape)
