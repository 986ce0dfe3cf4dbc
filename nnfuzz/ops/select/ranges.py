"""Value-range rules of Where, Clip and Cast (see nnfuzz/abstract/ranges.py)."""
from __future__ import annotations

import numpy as np

from nnfuzz.abstract.ranges import UNIT, VRange, monotone, value_range
from nnfuzz.ops.select import spec as S

value_range(S.Clip)(monotone(lambda op, x: np.clip(x, op.min, op.max)))


@value_range(S.Cast)
def _cast(op, rs, ts):
    if op.to.value == "bool":
        return UNIT
    if op.to.is_int:  # truncation towards zero is monotone; out-of-range values are UB anyway
        return monotone(lambda o, x: np.trunc(x))(op, rs, ts)
    return rs[0]


@value_range(S.Where)
def _where(op, rs, ts):
    x, y = rs[1], rs[2]
    return VRange(min(x.lo, y.lo), max(x.hi, y.hi))
