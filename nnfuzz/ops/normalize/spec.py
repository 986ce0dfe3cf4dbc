"""ONNX reductions and normalisations the core set lacks.

ReduceSumSquare:           sum(x * x) over one axis (keepdims as the reduce family's reductions).
GlobalLpPool:              x[N, C, *S] -> [N, C, 1, ...]: (sum over S of |x|^p)^(1/p), p in {1, 2}.
LpNormalization:           x / (sum of |x|^p along ``axis``)^(1/p), p in {1, 2}; same shape.
MeanVarianceNormalization: (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9) over ``axes`` (ONNX's
                           function body, its variance formula and epsilon included); same shape.

ONNX takes bfloat16 for GlobalLpPool and LpNormalization from opset 22, for the others from 13.
"""
from nnfuzz.abstract.accuracy import Accuracy
from nnfuzz.abstract import arith
from nnfuzz.abstract.dtype import DTYPE_FLOATS, DType
from nnfuzz.abstract.op import MAX_RANK, AbsOpBase, ranks
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError
from nnfuzz.ops.reduce.spec import ReduceOp, SameShapeAxisOp


def _same(dtypes):
    return [(d,) for d in dtypes]


class ReduceSumSquare(ReduceOp):
    """Accumulates in the input dtype; an integer sum that overflows is rejected by the value search."""
    family = "normalize"
    in_dtypes = _same(DTYPE_FLOATS + (DType.int32, DType.int64))
    out_dtypes = _same(DTYPE_FLOATS + (DType.int32, DType.int64))


class GlobalLpPool(AbsOpBase):
    accuracy = Accuracy(8, 1.0, "spatial")
    family = "normalize"
    inp_ranks = [ranks(3, MAX_RANK)]
    out_ranks = [ranks(3, MAX_RANK)]
    in_dtypes = _same(DTYPE_FLOATS)
    out_dtypes = _same(DTYPE_FLOATS)
    attr_choices = {"p": (1, 2)}

    def __init__(self, *, p):
        self.p = p

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(list(x.shape[:2]) + [1] * (x.ndims - 2), x.dtype)]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        (out,) = outputs
        if out.ndims not in self.inp_ranks[0]:
            raise ConstraintError(f"GlobalLpPool cannot produce rank {out.ndims}")
        return [(out.ndims, self._pick_in_row([out.dtype], rng)[0])]


class LpNormalization(SameShapeAxisOp):
    """A slice whose norm is 0 has no defined result in torch (0 / 0): the value search avoids it."""
    family = "normalize"
    attr_choices = {"p": (1, 2)}

    def __init__(self, axis, *, p):
        self.axis = axis
        self.p = p


class MeanVarianceNormalization(AbsOpBase):
    """Over at least two elements (one has no variance)."""
    accuracy = Accuracy(16, 2.0, "largest")
    family = "normalize"
    in_dtypes = _same(DTYPE_FLOATS)
    out_dtypes = _same(DTYPE_FLOATS)
    attr_choices = {"axes": ((0, 2, 3), (2, 3), (1,), (0, 1), (1, 2, 3))}

    def __init__(self, *, axes):
        self.axes = tuple(axes)
        self.inp_ranks = [ranks(max(self.axes) + 1, MAX_RANK)]
        self.out_ranks = [ranks(max(self.axes) + 1, MAX_RANK)]

    def requires(self, inputs):
        (x,) = inputs
        return [arith.prod([x.shape[a] for a in self.axes]) >= 2]

    def type_transfer(self, inputs):
        return [AbsTensor(inputs[0].shape, inputs[0].dtype)]
