"""Value-range rules of the indexing ops (see nnfuzz/abstract/ranges.py): what they move stays within
its sources' bounds; indices, one-hot values and ranges have known bounds."""
from __future__ import annotations

from nnfuzz.abstract.ranges import UNKNOWN, VRange, subset, value_range
from nnfuzz.ops.indexing import spec as I

value_range(I.GatherElements, I.ReverseSequence)(subset)


@value_range(I.TopK)
def _topk(op, rs, ts):
    return [subset(op, rs, ts), VRange(0.0, float(int(ts[0].shape[op.axis]) - 1))]


@value_range(I.ScatterElements, I.ScatterND)
def _scatter(op, rs, ts):
    """Each output element is a data element, an update, or (max/min) the larger/smaller of both."""
    if op.reduction in ("add", "mul"):
        return UNKNOWN
    return VRange(min(r.lo for r in rs), max(r.hi for r in rs))


@value_range(I.OneHot)
def _one_hot(op, rs, ts):
    return VRange(float(min(op.values)), float(max(op.values)))


@value_range(I.Range)
def _range(op, rs, ts):
    last = op.start + op.delta * (int(ts[0].shape[op.axis]) - 1)
    return VRange(float(min(op.start, last)), float(max(op.start, last)))
