"""A kink: where an op's derivative jumps or is undefined (relu and abs at 0, floor at every integer, clip
at its bounds, max where its operands tie). An op class states its kinks as data next to its domains,
``kinks = {input index: Kink(...)}``; the value search derives one loss from them (materialize/torch/kinks.py)
that keeps every element a margin away from each kink when the test compares gradients (oracle=grad:
``search.kinks``). Close to a kink, another system's rounding may put a value on the other side and take the
other one-sided derivative; exactly on it (a relu's own 0 fed to the next relu) every system computes the
same value and derivative, so exact hits are left alone. Framework-free: imports nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple


@dataclass(frozen=True)
class Kink:
    """The kink points of one input: ``points``, the values of the op's attributes named in ``attrs``
    (``mirrored``: also their negatives, for |x| > lambd), every ``offset + k * period`` (``period`` > 0:
    floor, round), and, with ``ties``, wherever the input equals input ``ties_with`` (max, min)."""

    points: Tuple[float, ...] = ()
    attrs: Tuple[str, ...] = ()
    mirrored: bool = False
    period: float = 0.0
    offset: float = 0.0
    ties_with: int = -1

    def points_of(self, op) -> Tuple[float, ...]:
        """The fixed kink points of ``op`` (an instance: its attributes' values)."""
        from_attrs = tuple(float(getattr(op, a)) for a in self.attrs)
        if self.mirrored:
            from_attrs += tuple(-p for p in from_attrs)
        return tuple(self.points) + from_attrs


AT_ZERO = Kink(points=(0.0,))
