"""An input domain: where every element of an op's input must lie for its result to be defined.

An op class states its domains as data, ``domains = {input index: Domain(...)}`` (e.g. Log's
``{0: Domain(lo=0.0, lo_open=True)}``). Both consumers derive their checks from it: the generator's
value-range analysis (``nnfuzz.abstract.ranges.infeasible``) rejects graphs no input can put inside
it, and the value search (``nnfuzz.materialize.torch.losses``) builds a loss that is zero exactly
when the inputs are inside it with a per-dtype margin. Framework-free: imports nothing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

INF = math.inf


@dataclass(frozen=True)
class Domain:
    """Every element must lie in lo..hi (an open end excludes the bound); ``nonzero`` excludes 0.
    ``margin``: how many of the value search's per-dtype margins an open bound (or the nonzero
    rule) keeps values away from the edge, where another system's rounding would cross it."""
    lo: float = -INF
    hi: float = INF
    lo_open: bool = False
    hi_open: bool = False
    nonzero: bool = False
    margin: float = 1.0

    def violated_by(self, r) -> Optional[str]:
        """Why no values in the value range ``r`` (a ``VRange``) can satisfy this domain (None: some can)."""
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


POSITIVE = Domain(lo=0.0, lo_open=True)
NONZERO = Domain(nonzero=True)
