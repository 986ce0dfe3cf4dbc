"""Value-range rules of the pools (see nnfuzz/abstract/ranges.py)."""
from __future__ import annotations

from nnfuzz.abstract.ranges import VRange, subset, value_range
from nnfuzz.ops.pool import spec as PO

value_range(PO.MaxPool1d, PO.MaxPool2d, PO.MaxPool3d, PO.GlobalMaxPool, PO.GlobalAvgPool,
            PO.AdaptiveAvgPool2d, PO.AdaptiveMaxPool2d)(subset)


@value_range(PO.AvgPool1d, PO.AvgPool2d, PO.AvgPool3d)
def _avg_pool(op, rs, ts):
    return VRange(min(rs[0].lo, 0.0), max(rs[0].hi, 0.0))  # zero padding may be averaged in
