"""Value-range rules of Concat, Split, Slice and Gather (see nnfuzz/abstract/ranges.py)."""
from __future__ import annotations

from nnfuzz.abstract.ranges import VRange, subset, value_range
from nnfuzz.ops.combine import spec as C

value_range(C.Slice, C.Gather)(subset)


@value_range(C.Split)
def _split(op, rs, ts):
    return [subset(op, rs, ts)] * len(op.sizes)


@value_range(C.Concat)
def _concat(op, rs, ts):
    return VRange(min(r.lo for r in rs), max(r.hi for r in rs), min(r.min_ub for r in rs),
                  max(r.max_lb for r in rs), any(r.has_zero for r in rs))
