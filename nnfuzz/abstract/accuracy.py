"""Accuracy budgets: how far a correct kernel's output may be from the exactly rounded result, in ulps of
the output dtype, declared per op (class attribute ``accuracy``) next to its spec.

- exact ops (data movement, selection, comparisons, integer ops, max/min): ``EXACT`` (0 ulps);
- correctly rounded arithmetic (IEEE 754 +, -, *, /, sqrt): ``ROUNDED`` (1 ulp: half an ulp of rounding
  plus half of slack for the float64 reference, itself computed in float64);
- transcendental functions and short formulas of them: ``Accuracy(n)`` with a few ulps;
- ops that round to a quantization grid (QuantizeLinear, QLinearConv, ...): ``steps`` (1): an integer output
  one step off where the real-valued result lies within rounding of a tie (docs/quantization.md);
- reductions, matmul, convolutions, normalizations: a few ulps plus ``per_term`` ulps for each element an
  output accumulates (``terms``: which of the op's shapes says how many; an order of summation other than
  the reference's, or a blocked or tree sum, costs up to about one ulp per term).

The measure (nnfuzz/triage/local_error.py) counts ulps at each element's own magnitude, with a floor near
zero: ``FLOOR`` times the largest magnitude among the node's outputs, and the largest magnitude among its
float inputs (for an op that is not exact; times the accumulated length for an op that accumulates, whose
roundings scale with its partial sums), so an element that cancels to nearly nothing is judged at the
scale it came from. (A kernel may lose what lies below its inputs' last digit: an exp that flushes a result
far below its input's scale is not charged; what that changes downstream is.)
``benchmarks/ulp_calibration.py`` measures what correct kernels give; each budget sits above it.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import numpy as np

FLOOR = 2.0 ** -8   # ulps near zero are counted at this fraction of the node's largest magnitude

# mantissa bits (with the implicit one) and the smallest normal exponent of each float dtype
_FORMAT = {"float16": (11, -14), "bfloat16": (8, -126), "float32": (24, -126), "float64": (53, -1022)}


@dataclasses.dataclass(frozen=True)
class Accuracy:
    ulps: float                 # allowed error of a kernel on one element, in ulps of the output dtype
    per_term: float = 0.0       # plus this many ulps per accumulated element (see ``terms``)
    terms: str = "none"         # none | reduced | inner | kernel | spatial | largest (see ``accumulated``)
    steps: int = 0              # integer outputs on a quantization grid: this many steps off is allowed

    def budget(self, in_shapes: Sequence[Sequence[int]], out_shapes: Sequence[Sequence[int]]) -> float:
        return self.ulps + self.per_term * accumulated(self.terms, in_shapes, out_shapes)

    @property
    def accumulates(self) -> bool:
        return self.terms != "none"


EXACT = Accuracy(0)
ROUNDED = Accuracy(1)


def accumulated(rule: str, ins: Sequence[Sequence[int]], outs: Sequence[Sequence[int]]) -> int:
    """How many input elements one output element accumulates, by ``rule``:
    reduced: input 0's size over output 0's (a reduction); inner: the larger of input 0's last two dims
    (matmul's inner dimension, either layout); kernel: input 1's size over the smaller of its first two dims
    (a convolution's channels times its window); spatial: input 0's size over its first two dims (a pool or
    a per-channel normalization); largest: the largest input size (einsum, norms over several axes)."""
    size = [math.prod(int(d) for d in s) for s in ins]
    if rule == "none" or not ins:
        return 0
    if rule == "reduced":
        out = math.prod(int(d) for d in outs[0]) if outs else 1
        return max(1, size[0] // max(out, 1))
    if rule == "inner":
        return max([int(d) for d in ins[0][-2:]] or [1])
    if rule == "kernel" and len(ins) > 1 and len(ins[1]) >= 2:
        return max(1, size[1] // max(1, min(int(ins[1][0]), int(ins[1][1]))))
    if rule == "spatial" and len(ins[0]) >= 2:
        return max(1, size[0] // max(1, int(ins[0][0]) * int(ins[0][1])))
    return max(size)  # largest, and the fallback of a rule that does not fit the shapes


def ulp(x: np.ndarray, dtype: str) -> np.ndarray:
    """The unit in the last place of ``dtype`` at each |x| (x in float64): the gap between the two
    representable values around it; subnormal spacing below the smallest normal."""
    bits, emin = _FORMAT[dtype]
    a = np.abs(np.asarray(x, dtype=np.float64))
    a = np.where(np.isfinite(a), a, 0.0)
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
    e = np.maximum(np.where(a > 0, e, emin), emin)
    return np.ldexp(1.0, (e - (bits - 1)).astype(np.int64))
