"""Value-range rules of the reductions and axis ops (see nnfuzz/abstract/ranges.py)."""
from __future__ import annotations

import math

from nnfuzz.abstract.ranges import INF, UNIT, UNKNOWN, VRange, value_range
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.ops.elementwise.ranges import even
from nnfuzz.ops.reduce import spec as R


def _n(op, ts) -> int:
    return int(ts[0].shape[op.axis]) if ts[0].ndims else 1


def _single(op, rs, ts):
    """Over a single element: the values themselves (an absolute value for the norms; exactly 1, or
    its log 0, for a softmax)."""
    if isinstance(op, (R.ReduceL1, R.ReduceL2)):
        return even(E.Abs(), rs, ts)
    if isinstance(op, (R.Softmax, R.LogSoftmax)):
        v = 1.0 if isinstance(op, R.Softmax) else 0.0
        return VRange(v, v, v, v, v == 0)
    return rs[0]


@value_range(R.ReduceMax, R.ReduceMin, R.ReduceMean, R.ReduceSum, R.ReduceProd, R.ReduceL1, R.ReduceL2,
             R.LogSumExp, R.ArgMax, R.ArgMin, R.Softmax, R.LogSoftmax, R.CumSum)
def _reduce(op, rs, ts):
    r, n = rs[0], _n(op, ts)
    if n == 0:
        return UNKNOWN
    if n == 1 and not isinstance(op, (R.LogSumExp, R.ArgMax, R.ArgMin)):
        return _single(op, rs, ts)
    big = max(abs(r.lo), abs(r.hi))
    if isinstance(op, R.ReduceMax):
        return VRange(r.lo, r.hi, max_lb=r.max_lb)
    if isinstance(op, R.ReduceMin):
        return VRange(r.lo, r.hi, min_ub=r.min_ub)
    if isinstance(op, R.ReduceMean):
        return r.interval()
    if isinstance(op, (R.ReduceSum, R.CumSum)):
        return VRange(min(r.lo, n * r.lo), max(r.hi, n * r.hi))
    if isinstance(op, R.ReduceProd):  # a product over a slice holding a zero is zero
        out = (UNIT if r.hi <= 1 else VRange(0.0, INF)) if r.lo >= 0 else UNKNOWN
        return out.hull(0.0) if r.has_zero else out
    if isinstance(op, R.ReduceL1):
        return VRange(0.0, n * big)
    if isinstance(op, R.ReduceL2):
        return VRange(0.0, math.sqrt(n) * big)
    if isinstance(op, R.LogSumExp):
        return VRange(r.lo, r.hi + math.log(n))
    if isinstance(op, (R.ArgMax, R.ArgMin)):
        return VRange(0.0, n - 1.0)
    if isinstance(op, R.Softmax):
        return VRange(0.0, 1.0, 1.0 / n, 1.0 / n)
    return VRange(-INF, 0.0, -math.log(n), -math.log(n))  # LogSoftmax
