"""Value-range rules of the layout ops (see nnfuzz/abstract/ranges.py): every element kept, maybe
repeated; a triangle zeroes some."""
from __future__ import annotations

from nnfuzz.abstract.ranges import VRange, value_range
from nnfuzz.ops.layout import spec as L


@value_range(L.Reshape, L.Flatten, L.Transpose, L.Permute, L.Squeeze, L.Unsqueeze, L.Expand, L.Tile,
             L.DepthToSpace, L.DepthToSpaceDCR, L.SpaceToDepth, L.Flip, L.Roll)
def _same(op, rs, ts):
    return rs[0] if all(int(d) > 0 for d in ts[0].shape) or not ts[0].ndims else rs[0].interval()


@value_range(L.Tril, L.Triu)
def _triangle(op, rs, ts):
    r = VRange(min(rs[0].lo, 0.0), max(rs[0].hi, 0.0))
    rows, cols = int(ts[0].shape[-2]), int(ts[0].shape[-1])
    if rows * cols == 0:
        return r
    d = op.diagonal
    zeroed = d < cols - 1 if isinstance(op, L.Tril) else d > 1 - rows
    return r.hull(0.0) if zeroed else r
