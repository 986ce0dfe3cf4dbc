"""Value-range rules of ReduceSumSquare, GlobalLpPool and LpNormalization (see nnfuzz/abstract/ranges.py)."""
from __future__ import annotations

from nnfuzz.abstract.ranges import INF, VRange, value_range
from nnfuzz.ops.normalize import spec as M


@value_range(M.ReduceSumSquare)
def _sum_square(op, rs, ts):
    r, n = rs[0], int(ts[0].shape[op.axis])
    big = max(abs(r.lo), abs(r.hi))
    return VRange(0.0, n * big * big if big < INF else INF)


value_range(M.GlobalLpPool)(lambda op, rs, ts: VRange(0.0, INF))
value_range(M.LpNormalization)(lambda op, rs, ts: VRange(-1.0, 1.0))
