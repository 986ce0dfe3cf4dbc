"""Value-range rules of the TF-only ops (see nnfuzz/abstract/ranges.py); their domains are on the
spec classes."""
from __future__ import annotations

from nnfuzz.abstract.ranges import SAME_INPUTS, UNKNOWN, ZERO, VRange, value_range
from nnfuzz.ops.binary.ranges import quotient
from nnfuzz.ops.tfonly import spec as T


@value_range(T.SquaredDifference)
def _squared_difference(op, rs, ts):
    a, b = rs  # the square of the difference's range
    lo, hi = a.lo - b.hi, a.hi - b.lo
    return VRange(0.0 if lo <= 0 <= hi else min(lo * lo, hi * hi), max(lo * lo, hi * hi))


@value_range(T.FloorMod)
def _floor_mod(op, rs, ts):
    a, b = rs  # the result lies between 0 and y (inclusive: x mod y may round to y)
    out = VRange(min(b.lo, 0.0), max(b.hi, 0.0))
    return out.hull(0.0) if a.has_zero else out  # 0 mod y is 0 (y is non-zero: the domain)


@value_range(T.DivNoNan)
def _div_no_nan(op, rs, ts):
    a, b = rs  # Div's range where y cannot be 0; 0 wherever y is 0, or x is 0
    out = quotient(a, b) if b.lo > 0 or b.hi < 0 else UNKNOWN
    return out.hull(0.0) if a.has_zero or b.has_zero else out


# x - x is 0, and x mod x too (fmod(x, x) is exactly +-0, and 0 needs no sign fix); DivNoNan(x, x) is
# 1 except where x is 0
SAME_INPUTS[T.SquaredDifference] = ZERO
SAME_INPUTS[T.FloorMod] = ZERO
