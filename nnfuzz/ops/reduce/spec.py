"""Reductions over one axis, and axis-wise normalisations (Softmax, LogSoftmax, CumSum).

A reduction over ``axis`` (0 <= axis < rank, rank >= 1) removes that dim, or keeps it as 1 when
``keepdims``. The axis is symbolic, so the output shape is written with If: output dim i is input
dim i before the axis and input dim i + 1 after it.
"""
from nnfuzz.abstract.accuracy import Accuracy, EXACT
from nnfuzz.abstract import arith
from nnfuzz.abstract.dtype import DTYPE_FLOATS, DTYPE_NUMERIC, DType
from nnfuzz.abstract.kink import AT_ZERO, MAX_ALONG_AXIS, MIN_ALONG_AXIS
from nnfuzz.abstract.op import MAX_RANK, AbsOpBase, ranks
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError


def _same(dtypes):
    return [(d,) for d in dtypes]


# ONNX ReduceMax/ReduceMin (opset 17) have no int16 variant.
_MINMAX = DTYPE_FLOATS + (DType.int8, DType.int32, DType.int64, DType.uint8)


class AxisOp(AbsOpBase, abstract=True):
    """An op with one symbolic axis of its (rank >= 1) input."""
    family = "reduce"

    inp_ranks = [ranks(1)]
    out_ranks = [ranks(1)]
    attr_kinds = {"axis": "index"}
    in_dtypes = _same(DTYPE_FLOATS)
    out_dtypes = _same(DTYPE_FLOATS)

    def __init__(self, axis):
        self.axis = axis

    def requires(self, inputs):
        (x,) = inputs
        return [0 <= self.axis, self.axis < x.ndims]


class ReduceOp(AxisOp, abstract=True):
    """y = reduce(x, axis), keepdims chooses whether the axis stays as a dim of size 1."""
    accuracy = Accuracy(4, 1.0, "reduced")

    attr_choices = {"keepdims": (False, True)}
    out_ranks = [ranks(0)]  # per instance: 1.. with keepdims, else ..MAX_RANK - 1

    def __init__(self, axis, *, keepdims):
        self.axis = axis
        self.keepdims = keepdims
        self.out_ranks = [ranks(1)] if keepdims else [ranks(0, MAX_RANK - 1)]

    def type_transfer(self, inputs):
        (x,) = inputs
        s, a = x.shape, self.axis
        if self.keepdims:
            shape = [arith.If(a == i, 1, s[i]) for i in range(x.ndims)]
        else:
            shape = [arith.If(a <= i, s[i + 1], s[i]) for i in range(x.ndims - 1)]
        return [AbsTensor(shape, self.out_dtypes_for(inputs)[0])]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        (out,) = outputs
        rank = out.ndims if self.keepdims else out.ndims + 1
        if rank not in self.inp_ranks[0]:
            raise ConstraintError(f"{self.name}(keepdims={self.keepdims}) cannot make a rank-{out.ndims} output")
        return [(rank, self._pick_in_row([out.dtype], rng)[0])]


class ReduceSum(ReduceOp):
    """Accumulates in the input dtype (integers wrap)."""
    in_dtypes = _same(DTYPE_NUMERIC)
    out_dtypes = _same(DTYPE_NUMERIC)


class ReduceProd(ReduceOp):
    """Floats only: integer products overflow after a few factors, and the runtimes disagree on
    overflow (torch wraps, ORT's int64 kernel saturates): undefined behaviour, not a finding."""
    in_dtypes = _same(DTYPE_FLOATS)
    out_dtypes = _same(DTYPE_FLOATS)


class ReduceMean(ReduceOp):
    pass


class ReduceMax(ReduceOp):
    accuracy = EXACT
    kinks = {0: MAX_ALONG_AXIS}
    indexes = {0: 0}  # its output holds indices into input 0 along ``axis`` (triage/local_error.py: ties)
    in_dtypes = _same(_MINMAX)
    out_dtypes = _same(_MINMAX)


class ReduceMin(ReduceOp):
    accuracy = EXACT
    kinks = {0: MIN_ALONG_AXIS}
    indexes = {0: 0}
    in_dtypes = _same(_MINMAX)
    out_dtypes = _same(_MINMAX)


class ReduceL1(ReduceOp):
    """sum(|x|)."""
    kinks = {0: AT_ZERO}


class ReduceL2(ReduceOp):
    """sqrt(sum(x^2))."""


class LogSumExp(ReduceOp):
    """log(sum(exp(x)))."""
    accuracy = Accuracy(8, 1.0, "reduced")


class ArgMax(ReduceOp):
    """Index (int64) of the first maximum. Its kink: what it indexes (a Gather's data) gets the gradient."""
    accuracy = EXACT
    kinks = {0: MAX_ALONG_AXIS}
    indexes = {0: 0}  # its output holds indices into input 0 along ``axis`` (triage/local_error.py: ties)
    in_dtypes = _same(DTYPE_NUMERIC)
    out_dtypes = [(DType.int64,)] * len(DTYPE_NUMERIC)


class ArgMin(ReduceOp):
    """Index (int64) of the first minimum."""
    accuracy = EXACT
    kinks = {0: MIN_ALONG_AXIS}
    indexes = {0: 0}
    in_dtypes = _same(DTYPE_NUMERIC)
    out_dtypes = [(DType.int64,)] * len(DTYPE_NUMERIC)


# ---- same-shape ops along an axis ----------------------------------------------------------------

class SameShapeAxisOp(AxisOp, abstract=True):
    accuracy = Accuracy(8, 1.0, "largest")
    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(x.shape, self.out_dtypes_for(inputs)[0])]


class Softmax(SameShapeAxisOp):
    pass


class LogSoftmax(SameShapeAxisOp):
    """Vulnerable: log of an underflowed probability."""


class CumSum(SameShapeAxisOp):
    """Inclusive prefix sum in the input dtype. ONNX CumSum has no int8/int16/uint8 variant."""
    in_dtypes = _same(DTYPE_FLOATS + (DType.int32, DType.int64))
    out_dtypes = _same(DTYPE_FLOATS + (DType.int32, DType.int64))
