"""Value-range rules of the integer ops (see nnfuzz/abstract/ranges.py); their domains are on the
spec classes."""
from __future__ import annotations

from nnfuzz.abstract.ranges import SAME_INPUTS, ZERO, VRange, value_range
from nnfuzz.ops.bitwise import spec as K


@value_range(K.Mod)
def _mod(op, rs, ts):
    a, b = rs  # |x mod y| < |y|, with y's sign
    m = max(abs(b.lo), abs(b.hi))
    return VRange(0.0 if b.lo > 0 else -m, 0.0 if b.hi < 0 else m)


@value_range(K.IntDiv)
def _int_div(op, rs, ts):
    a = rs[0]  # |x / y| <= |x| for a non-zero integer y
    m = max(abs(a.lo), abs(a.hi))
    return VRange(-m, m)


for _cls in (K.Mod, K.BitwiseXor):
    SAME_INPUTS[_cls] = ZERO
