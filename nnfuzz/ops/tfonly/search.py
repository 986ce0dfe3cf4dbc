"""Value-search aids of the TF-only ops (nnfuzz/materialize/search.py): DivNoNan's divisor."""
from __future__ import annotations

from nnfuzz.materialize.torch.losses import away_from_zero, domain_loss, margin
from nnfuzz.ops.tfonly import spec as T


@domain_loss(T.DivNoNan)
def _divisor_zero_or_away(op, xs, dts):
    """DivNoNan defines y == 0 (the result is 0); any other y must be a safe divisor: TF flushes
    subnormals to zero, so a tiny divisor is 0 there and not in torch."""
    y = xs[1]
    return away_from_zero(y[y.detach() != 0], margin(dts[1]))
