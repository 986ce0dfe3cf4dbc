"""Reductions over one axis (keepdims keeps it as a dim of size 1) and the same-shape axis ops
Softmax, LogSoftmax and CumSum.

Floats: the formula in float64 (rounded once by eval_op). Integers: in their own dtype, so
ReduceSum and CumSum wrap like C; ReduceMax/ReduceMin and ArgMax/ArgMin compare them exactly.
ArgMax/ArgMin give the (int64) index of the first extreme element, as torch and ONNX
(select_last_index=0) do.
"""
import numpy as np

from nnfuzz.ops.reduce import spec as R
from nnfuzz.reference.registry import evaluates


def num(x):
    """Integers as they are, floats (bfloat16 included) in float64."""
    return x if x.dtype.kind in "iu" else np.asarray(x, dtype=np.float64)


def _logsumexp(v, axis, keepdims):
    return np.logaddexp.reduce(v, axis=axis, keepdims=keepdims)  # log(sum(exp(v))) without overflow


# y = f(x, axis, keepdims), x as num(x) gives it
REDUCTIONS = {
    R.ReduceSum: lambda v, axis, keepdims: np.sum(v, axis, dtype=v.dtype, keepdims=keepdims),
    R.ReduceProd: np.prod,  # floats only
    R.ReduceMean: np.mean,
    R.ReduceMax: np.max,  # NaN propagates
    R.ReduceMin: np.min,
    R.ReduceL1: lambda v, axis, keepdims: np.sum(np.abs(v), axis, keepdims=keepdims),
    R.ReduceL2: lambda v, axis, keepdims: np.sqrt(np.sum(v * v, axis, keepdims=keepdims)),
    R.LogSumExp: _logsumexp,
    R.ArgMax: np.argmax,  # first occurrence (a NaN counts as the maximum)
    R.ArgMin: np.argmin,
}


@evaluates(*REDUCTIONS)
def _reduce(op, x):
    return REDUCTIONS[type(op)](num(x), axis=op.axis, keepdims=op.keepdims)


@evaluates(R.Softmax)
def _softmax(op, x):
    e = np.exp(num(x) - np.max(num(x), op.axis, keepdims=True))
    return e / np.sum(e, op.axis, keepdims=True)


@evaluates(R.LogSoftmax)
def _log_softmax(op, x):
    v = num(x)
    return v - _logsumexp(v, op.axis, keepdims=True)


@evaluates(R.CumSum)
def _cumsum(op, x):
    v = num(x)
    return np.cumsum(v, op.axis, dtype=v.dtype)  # inclusive; integers wrap in their dtype
