"""Where an op's result jumps (ties): comparisons of near-equal values, floor/ceil/round near their
jump points, sign near zero. Jittered twin runs alternate the side of every near tie (``side`` is
+1 or -1), so across runs the oracle sees both results there and treats them as precision noise.

Keyed by op name; ``fn(inputs, out, margin, side) -> out``.
"""
from __future__ import annotations

import torch


def _compare(xs, out, eps, side):
    a, b = torch.broadcast_tensors(xs[0], xs[1])
    if not a.is_floating_point():
        return out
    scale = max(float(a.abs().nan_to_num(0.0, 0.0, 0.0).max()), float(b.abs().nan_to_num(0.0, 0.0, 0.0).max()))
    near = (a - b).abs() <= eps * (a.abs() + b.abs() + scale / 4 + 1e-30)  # the jitter's absolute part too
    return torch.where(near, torch.full_like(out, side > 0), out)


def _shifted(fn):
    """Evaluate a step function just left or right of its input (by a margin relative to |x|)."""
    def apply(xs, out, eps, side):
        x = xs[0]
        return fn(x + side * eps * (x.abs() + 1.0)).to(out.dtype)
    return apply


TIES = {
    **{name: _compare for name in ("Equal", "Less", "LessEqual", "Greater", "GreaterEqual")},
    "Floor": _shifted(torch.floor),
    "Ceil": _shifted(torch.ceil),
    "Round": _shifted(torch.round),
    "Sign": lambda xs, out, eps, side: torch.sign(
        xs[0] + side * eps * (xs[0].abs().max() + 1e-30)).to(out.dtype),
}


def flip_ties(name: str, xs, outs, eps: float, side: int):
    fn = TIES.get(name)
    if fn is None or not xs or not xs[0].is_floating_point():
        return outs
    return [fn(xs, outs[0], eps, side)] + list(outs[1:])
