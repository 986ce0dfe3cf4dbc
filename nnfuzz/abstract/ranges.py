"""Value ranges: a small interval analysis that lets the generator skip graphs no input can make
finite, such as ``log(logsigmoid(x))``, ``sqrt(min(logsigmoid(x)))``, ``rsqrt(layernorm(x))``,
``log2(tril(x))`` or ``x / hardshrink(cos(acos(y)))``. No value search can rescue those, so every
one the generator builds is a test with an undefined reference.

A ``VRange`` over-approximates where a tensor's elements lie (``lo <= every element <= hi``) and
under-approximates facts that hold for *some* element (``min_ub``: some element is at most it;
``max_lb``: some element is at least it; ``zero``: some element is exactly 0). Ops register
``@value_range(OpClass)`` rules (``fn(op, ranges, tensors) -> VRange | [VRange]``, default: nothing
known), in their family's ``nnfuzz/ops/<family>/ranges.py``; an op class's ``domains``
(``nnfuzz/abstract/domain.py``) say where every element of an input must lie. ``infeasible`` says
when a domain cannot hold; ``propagate`` gives the outputs' ranges.
Both are sound: an op without rules only loses precision, never rejects a feasible graph.
"""
from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from nnfuzz.abstract.domain import Domain
from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.optable import OpTable
from nnfuzz.ops import load_aspect

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


ZERO = VRange(0.0, 0.0, 0.0, 0.0, True)


# True inside quiet_numpy() (per thread and context, as numpy's errstate is): _at need not enter its own
_quiet: ContextVar[bool] = ContextVar("nnfuzz_ranges_quiet", default=False)


class quiet_numpy:
    """Silence numpy's floating-point warnings for a batch of range steps (the overflow of exp(inf)
    is an answer here, not a problem): one errstate per insertion instead of one per evaluation."""

    __slots__ = ("_state", "_token")

    def __enter__(self):
        self._state = np.errstate(all="ignore")
        self._state.__enter__()
        self._token = _quiet.set(True)

    def __exit__(self, *exc):
        _quiet.reset(self._token)
        self._state.__exit__(*exc)


def _at(fn, x: float) -> float:
    if _quiet.get():
        return float(fn(np.float64(x)))
    with np.errstate(all="ignore"):
        return float(fn(np.float64(x)))


def monotone(fn, lo: float = -INF, hi: float = INF, decreasing: bool = False):
    """The rule of an elementwise ``fn(op, x)`` monotone over the reals, with image within [lo, hi]."""
    def clip(v, fallback):
        return fallback if math.isnan(v) else min(max(v, lo), hi)

    def rule(op, rs, ts):
        r = rs[0]
        f = (lambda x: _at(lambda v: fn(op, v), x))
        a, b = clip(f(r.lo), lo), clip(f(r.hi), hi)
        m, M = f(r.min_ub), f(r.max_lb)
        if decreasing:
            a, b = clip(f(r.hi), lo), clip(f(r.lo), hi)
            m, M = f(r.max_lb), f(r.min_ub)
        out = VRange(a, b, INF if math.isnan(m) else m, -INF if math.isnan(M) else M)
        if r.has_zero:
            z = f(0.0)
            out = out if math.isnan(z) else out.hull(z)
        return out

    return rule


def numel(dims) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


def subset(op, rs, ts) -> VRange:
    """The rule of an op whose output elements are some of its first input's (a slice, a max pool,
    a nearest resize, ...): within its bounds, and nothing known about which elements stay."""
    return rs[0].interval()


RANGE_RULES = OpTable("value-range rule")
SAME_INPUTS = OpTable("same-input range")  # binary op -> its output range when both inputs are one tensor
value_range = RANGE_RULES.register


def domain(*op_classes, index: int = 0, **bounds) -> None:
    """Declare ``Domain(**bounds)`` for input ``index`` of ``op_classes``: the same as writing it into
    their ``domains`` class attribute (what both the range check and the search loss read)."""
    for cls in op_classes:
        cls.domains = {**cls.domains, index: Domain(**bounds)}


def _lookup(table: OpTable, cls):
    if not _loaded:
        _load()
    return table.lookup(cls)


def infeasible(op, ranges: List[VRange]) -> Optional[str]:
    """Why no values can put ``op``'s inputs in its domain (None: it may be possible)."""
    for index, dom in type(op).domains.items():
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


_loaded: list = []  # non-empty once the builtin rules are imported


def _load() -> None:
    from nnfuzz import ops

    load_aspect("ranges")
    if "ranges" in ops._loaded:  # not while the rules' own modules are importing
        _loaded.append(True)
