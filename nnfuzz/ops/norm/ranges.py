"""Value-range rules of the normalisations (see nnfuzz/abstract/ranges.py)."""
from __future__ import annotations

from nnfuzz.abstract.ranges import UNKNOWN, ZERO, VRange, numel, value_range
from nnfuzz.ops.norm import spec as N


@value_range(N.LayerNorm)
def _layer_norm(op, rs, ts):
    n = numel(ts[0].shape[ts[0].ndims - op.k:])
    if n == 1:  # each element is its own mean: 0, then the bias
        return rs[2] if op.affine else ZERO
    if op.affine:
        return UNKNOWN
    return VRange(min_ub=0.0, max_lb=0.0)  # zero mean: some element <= 0 and some >= 0


@value_range(N.InstanceNorm, N.GroupNorm)
def _channel_norm(op, rs, ts):
    x = ts[0]
    group = numel(x.shape[2:]) * (int(x.shape[1]) // op.groups if isinstance(op, N.GroupNorm) else 1)
    return rs[2] if group == 1 and numel(x.shape) else UNKNOWN  # one element per group: the bias
