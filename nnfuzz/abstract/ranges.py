"""Value ranges: a small interval analysis that lets the generator skip graphs no input can make
finite, such as ``log(logsigmoid(x))``, ``sqrt(min(logsigmoid(x)))``, ``rsqrt(layernorm(x))``,
``log2(tril(x))`` or ``x / hardshrink(cos(acos(y)))``. No value search can rescue those, so every
one the generator builds is a test with an undefined reference.

A ``VRange`` over-approximates where a tensor's elements lie (``lo <= every element <= hi``) and
under-approximates facts that hold for *some* element (``min_ub``: some element is at most it;
``max_lb``: some element is at least it; ``zero``: some element is exactly 0). Ops register
``@value_range(OpClass)`` rules (``fn(op, ranges, tensors) -> VRange | [VRange]``, default: nothing
known) and ``domain(OpClass, index, ...)`` declarations (every element of that input must lie in
the domain). ``infeasible`` says when a domain cannot hold; ``propagate`` gives the outputs' ranges.
Both are sound: an op without rules only loses precision, never rejects a feasible graph.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.optable import OpTable

INF = math.inf


@dataclass(frozen=True)
class VRange:
    lo: float = -INF
    hi: float = INF
    min_ub: float = INF     # some element is <= min_ub
    max_lb: float = -INF    # some element is >= max_lb
    zero: bool = False      # some element is exactly 0

    @property
    def has_zero(self) -> bool:
        """Some element is exactly 0: said so, or the bound that some element reaches is 0."""
        return self.zero or (self.min_ub <= self.lo == 0) or (self.max_lb >= self.hi == 0)

    @property
    def some_le(self) -> float:
        return min(self.min_ub, 0.0) if self.has_zero else self.min_ub

    @property
    def some_ge(self) -> float:
        return max(self.max_lb, 0.0) if self.has_zero else self.max_lb

    def hull(self, *values: float) -> "VRange":
        """Every element stays, and some elements equal each of ``values``."""
        r = self
        for v in values:
            r = VRange(min(r.lo, v), max(r.hi, v), min(r.min_ub, v), max(r.max_lb, v), r.zero or v == 0)
        return r

    def interval(self) -> "VRange":
        """Only the bounds (some elements may be gone)."""
        return VRange(self.lo, self.hi)


UNKNOWN = VRange()
UNIT = VRange(0.0, 1.0)


def for_dtype(dt: DType) -> VRange:
    """What a fresh input or weight of dtype ``dt`` may hold."""
    return UNIT if dt is DType.bool else UNKNOWN


@dataclass(frozen=True)
class Domain:
    """Every element must lie in lo..hi (open ends exclude the bound); ``nonzero`` excludes 0."""
    lo: float = -INF
    hi: float = INF
    lo_open: bool = False
    hi_open: bool = False
    nonzero: bool = False

    def violated_by(self, r: VRange) -> Optional[str]:
        below = (lambda x: x <= self.lo) if self.lo_open else (lambda x: x < self.lo)
        above = (lambda x: x >= self.hi) if self.hi_open else (lambda x: x > self.hi)
        if below(r.hi) or above(r.lo):
            return f"every element is outside {self}"
        if below(r.some_le) or above(r.some_ge):
            return f"some element is always outside {self}"
        if self.nonzero and (r.has_zero or r.lo == r.hi == 0):
            return "some element is always 0"
        return None

    def __str__(self) -> str:
        if self.nonzero:
            return "x != 0"
        return f"{'(' if self.lo_open else '['}{self.lo}, {self.hi}{')' if self.hi_open else ']'}"


RANGE_RULES = OpTable()
DOMAINS = OpTable()      # op class -> [(input index, Domain)]
SAME_INPUTS = OpTable()  # binary op -> its output range when both inputs are one tensor
value_range = RANGE_RULES.register


def domain(*op_classes, index: int = 0, **bounds) -> None:
    for cls in op_classes:
        DOMAINS.setdefault(cls, []).append((index, Domain(**bounds)))


def _lookup(table: OpTable, cls):
    _load()
    return table.lookup(cls)


def infeasible(op, ranges: List[VRange]) -> Optional[str]:
    """Why no values can put ``op``'s inputs in its domain (None: it may be possible)."""
    for index, dom in _lookup(DOMAINS, type(op)) or ():
        if index < len(ranges):
            why = dom.violated_by(ranges[index])
            if why:
                return f"{op.name} input {index}: {why}"
    return None


def propagate(op, ranges: List[VRange], tensors, n_out: int, names=None) -> List[VRange]:
    """The outputs' ranges (UNKNOWN where the op has no rule). ``names`` (the input vars) tells
    when a binary op reads one tensor twice (x - x is 0)."""
    same = _lookup(SAME_INPUTS, type(op))
    if same is not None and names is not None and len(names) == 2 and names[0] == names[1]:
        return [same]
    fn = _lookup(RANGE_RULES, type(op))
    if fn is None:
        return [UNKNOWN] * n_out
    out = fn(op, ranges, tensors)
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    return out if len(out) == n_out else [UNKNOWN] * n_out


_loaded = False


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        import nnfuzz.abstract.ops.value_ranges  # noqa: F401
