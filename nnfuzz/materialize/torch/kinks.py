"""The value search's kink loss (``search.kinks``, set for oracle=grad): derived from each op class's
``kinks`` (nnfuzz/abstract/kink.py), zero when every element of each input lies a margin away from each of
the op's kink points (or is exactly on one: see kink.py), else the distance still to go.

The margin is relative, ``KINK_MARGIN[dtype] * (1 + |kink|)``: far beyond the rounding any system adds to
a value computed before the op (a few ulps, grown by the graph's conditioning), so that no system's value
lands on the other side of the kink from torch eager's and takes the other one-sided derivative.
"""
from __future__ import annotations

from typing import Callable, Optional

import torch

from nnfuzz.abstract.dtype import DType

KINK_MARGIN = {DType.float16: 3e-2, DType.bfloat16: 1e-1, DType.float32: 1e-3, DType.float64: 1e-6}


def near(d: torch.Tensor, room) -> torch.Tensor:
    """Zero where every distance ``d`` is 0 (exactly on the kink) or at least ``room``; else the total
    distance still to go (its gradient pushes each such element away from the kink)."""
    close = ((d > 0) & (d < room)).detach()
    return (torch.relu(room - d) * close).sum()


def kink_term(op, kink, x, xs, dt: DType) -> torch.Tensor:
    """The loss of input ``x``'s ``kink`` (``xs``: all the op's inputs as float tensors; ``dt``: x's dtype)."""
    m = KINK_MARGIN.get(dt, 0.0)
    total = torch.zeros((), dtype=x.dtype)
    for p in kink.points_of(op):
        total = total + near((x - p).abs(), m * (1 + abs(p)))
    if kink.period > 0:
        shifted = x - kink.offset
        d = (shifted - torch.round(shifted.detach() / kink.period) * kink.period).abs()
        total = total + near(d, m * (1 + x.detach().abs()))
    if 0 <= kink.ties_with < len(xs):
        a, b = torch.broadcast_tensors(x, xs[kink.ties_with])
        total = total + near((a - b).abs(), m * (1 + a.detach().abs() + b.detach().abs()))
    return total


def with_kinks(loss: Optional[Callable], cls) -> Optional[Callable]:
    """``loss`` (an op's domain loss, or None) plus the loss of ``cls``'s kinks (``loss`` itself without any)."""
    kinks = dict(cls.kinks)
    if not kinks:
        return loss

    def total(op, xs, dts):
        out = loss(op, xs, dts) if loss is not None else torch.zeros(())
        for index, kink in kinks.items():
            if index < len(xs) and dts[index].is_float:
                out = out + kink_term(op, kink, xs[index], xs, dts[index])
        return out

    return total
