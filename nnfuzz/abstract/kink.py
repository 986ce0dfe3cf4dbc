"""A kink: where an op's derivative jumps or is undefined (relu and abs at 0, floor at every integer, clip
at its bounds, max where its operands tie, a reduction's or a pooling window's maximum where the window's
two largest values tie, TopK where its leading values tie). An op class states its kinks as data next to its domains,
``kinks = {input index: Kink(...)}``; the value search derives one loss from them (materialize/torch/kinks.py)
that keeps every element a margin away from each kink when the test compares gradients (oracle=grad:
``search.kinks``). Close to a kink, another system's rounding may put a value on the other side and take the
other one-sided derivative; exactly on it (a relu's own 0 fed to the next relu) every system computes the
same value and derivative, so exact hits are left alone. Framework-free: imports nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple, Union

RANKED = ("axis", "window", "spatial")  # the groups a ranked kink orders (see Kink.ranked)


@dataclass(frozen=True)
class Kink:
    """The kink points of one input: ``points``, the values of the op's attributes named in ``attrs``
    (``mirrored``: also their negatives, for |x| > lambd), every ``offset + k * period`` (``period`` > 0:
    floor, round), with ``ties``, wherever the input equals input ``ties_with`` (max, min), and, with
    ``ratio_with``, wherever the input divided by input ``ratio_with`` is an integer (FloorMod, Fmod: their
    value jumps there, and their derivative in the divisor is minus the rounded quotient). An exact hit of a
    ratio kink counts too: a compiler computes the quotient its own way (XLA turns x / pow(a, b) into
    x * pow(a, -b), 1 ulp off), and floor(x / x) becomes 0 instead of 1.

    A ranked kink (``ranked``) is where the order of a group's leading values changes: the groups are the
    lines along the op's ``axis`` ("axis": ReduceMax, ArgMax, TopK), its pooling windows ("window": the
    MaxPools' kernel, stride, padding and dilation; AdaptiveMaxPool2d's blocks) or all its spatial dims
    ("spatial": GlobalMaxPool); ``top`` leading values (an int, or the attribute holding it: TopK's ``k``)
    must each lie a margin above the next, largest first (``largest``: a bool, or the attribute holding
    it). The gradient goes to the leading value's position: two systems that break a near tie (or an exact
    one: each has its own rule) differently put it in different places."""

    points: Tuple[float, ...] = ()
    attrs: Tuple[str, ...] = ()
    mirrored: bool = False
    period: float = 0.0
    offset: float = 0.0
    ties_with: int = -1
    ratio_with: int = -1
    ranked: str = ""
    top: Union[int, str] = 1
    largest: Union[bool, str] = True

    def __post_init__(self):
        if self.ranked and self.ranked not in RANKED:
            raise ValueError(f"Kink(ranked={self.ranked!r}): choose one of {RANKED}")

    def top_of(self, op) -> int:
        return int(getattr(op, self.top)) if isinstance(self.top, str) else int(self.top)

    def largest_of(self, op) -> bool:
        return bool(getattr(op, self.largest)) if isinstance(self.largest, str) else bool(self.largest)

    def points_of(self, op) -> Tuple[float, ...]:
        """The fixed kink points of ``op`` (an instance: its attributes' values)."""
        from_attrs = tuple(float(getattr(op, a)) for a in self.attrs)
        if self.mirrored:
            from_attrs += tuple(-p for p in from_attrs)
        return tuple(self.points) + from_attrs


AT_ZERO = Kink(points=(0.0,))
MAX_ALONG_AXIS = Kink(ranked="axis")
MIN_ALONG_AXIS = Kink(ranked="axis", largest=False)
