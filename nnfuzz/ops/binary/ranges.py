"""Value-range rules of the binary ops (see nnfuzz/abstract/ranges.py); their domains are on the
spec classes."""
from __future__ import annotations

import math

import numpy as np

from nnfuzz.abstract.ranges import INF, SAME_INPUTS, UNIT, UNKNOWN, ZERO, VRange, value_range
from nnfuzz.ops.binary import spec as B

value_range(B.Equal, B.Greater, B.Less, B.GreaterEqual, B.LessEqual, B.And, B.Or, B.Xor, B.Not)(
    lambda op, rs, ts: UNIT)


def _products(a, b):
    with np.errstate(all="ignore"):
        ps = [float(np.float64(x) * np.float64(y)) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    ps = [p for p in ps if not math.isnan(p)]
    return VRange(min(ps), max(ps)) if len(ps) == 4 else UNKNOWN


def quotient(a: VRange, b: VRange) -> VRange:
    """x / y's range (a zero element of x stays zero in x / y: broadcasting only repeats it, and y is
    finite and non-zero wherever the result is defined)."""
    out = UNKNOWN
    if b.lo > 0 or b.hi < 0:
        out = _products(a, VRange(min(1 / b.lo, 1 / b.hi), max(1 / b.lo, 1 / b.hi)))
    return out.hull(0.0) if a.has_zero else out


@value_range(B.Add, B.Sub, B.Mul, B.Div, B.Max, B.Min, B.Pow, B.Fmod)
def _binary(op, rs, ts):
    a, b = rs
    if isinstance(op, B.Add):
        return VRange(a.lo + b.lo, a.hi + b.hi) if math.isfinite(a.lo + b.lo) or math.isfinite(a.hi + b.hi) else UNKNOWN
    if isinstance(op, B.Sub):
        return VRange(a.lo - b.hi, a.hi - b.lo)
    if isinstance(op, B.Mul):  # (as in quotient: a zero element of x stays zero)
        out = _products(a, b)
        return out.hull(0.0) if a.has_zero or b.has_zero else out
    if isinstance(op, B.Div):
        return quotient(a, b)
    if isinstance(op, B.Max):
        return VRange(max(a.lo, b.lo), max(a.hi, b.hi), max_lb=max(a.max_lb, b.max_lb))
    if isinstance(op, B.Min):
        return VRange(min(a.lo, b.lo), min(a.hi, b.hi), min_ub=min(a.min_ub, b.min_ub))
    if isinstance(op, B.Pow):
        return VRange(0.0, INF)  # its domain is a positive base
    m = max(abs(b.lo), abs(b.hi))  # fmod: |result| < |y|, with x's sign
    return VRange(0.0 if a.lo >= 0 else -m, 0.0 if a.hi <= 0 else m)


ONE = VRange(1.0, 1.0, 1.0, 1.0)
for _cls, _same in {B.Sub: ZERO, B.Fmod: ZERO, B.Xor: ZERO, B.Div: ONE, B.Equal: ONE, B.Greater: ZERO,
                    B.Less: ZERO, B.GreaterEqual: ONE, B.LessEqual: ONE}.items():
    SAME_INPUTS[_cls] = _same
