"""Domain losses: for each operator with a vulnerable domain, a loss that is zero exactly when its
inputs are safe (with a margin) and grows with the distance from the safe region.

A loss is ``fn(op, xs, dtypes) -> scalar tensor``: ``xs`` are the op's inputs as float tensors
(integer and bool inputs as their float surrogates), ``dtypes`` their DTypes in the model. Most come
from data: an op class's ``domains`` (nnfuzz/abstract/domain.py) give the derived loss
(``domain_term``). What a domain cannot say (an overflow limit, a pole, a cast's target range) is a
registered loss, ``@domain_loss(OpClass, ...)`` in the family's ``nnfuzz/ops/<family>/search.py`` (or
next to a user's lowering), added to the derived one. Lookup walks the class's MRO.

The margins keep values away from the edge of the domain, where another system's rounding (a
flushed subnormal, a fast-math log) would turn a finite reference into NaN/Inf on the other side.
"""
from __future__ import annotations

import math
from typing import Callable, List, Optional

import torch

from nnfuzz.abstract.domain import Domain
from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.optable import OpTable
from nnfuzz.ops import load_aspect

DOMAIN_LOSSES = OpTable("domain loss")
domain_loss = DOMAIN_LOSSES.register

FMAX = {DType.float16: 65504.0, DType.bfloat16: 3.38e38, DType.float32: 3.40e38, DType.float64: 1.79e308}
# |divisor| (and log argument) margin per dtype: well above the subnormal range of the half types
MARGIN = {DType.float16: 1e-2, DType.bfloat16: 1e-2, DType.float32: 1e-3, DType.float64: 1e-6}


def loss_for(cls) -> Optional[Callable]:
    """The loss of ``cls``: its domains' derived loss plus its registered one (None: it has neither)."""
    load_aspect("search")
    extra, domains = DOMAIN_LOSSES.lookup(cls), dict(cls.domains)
    if not domains:
        return extra

    def loss(op, xs, dts):
        total = None
        for index, dom in domains.items():
            if index < len(xs):
                term = domain_term(xs[index], dom, dts[index])
                total = term if total is None else total + term
        total = torch.zeros(()) if total is None else total
        return total if extra is None else total + extra(op, xs, dts)

    return loss


def domain_term(x: torch.Tensor, dom: Domain, dt: DType) -> torch.Tensor:
    """Zero where every element of ``x`` is inside ``dom``, an open bound or the nonzero rule kept
    ``dom.margin`` per-dtype margins away; else the distance of the violating elements."""
    m = margin(dt) * dom.margin
    terms = []
    if dom.nonzero:
        terms.append(away_from_zero(x, m))
    if dom.lo > -math.inf:
        terms.append(above(x, dom.lo + m if dom.lo_open else dom.lo))
    if dom.hi < math.inf:
        terms.append(below(x, dom.hi - m if dom.hi_open else dom.hi))
    total = terms[0] if terms else torch.zeros(())
    for t in terms[1:]:
        total = total + t
    return total


def margin(dt: DType) -> float:
    return MARGIN.get(dt, 1e-3)


def exp_limit(dt: DType) -> float:
    """The largest x whose exp() is comfortably finite in ``dt`` (one below log(max))."""
    return math.log(FMAX.get(dt, FMAX[DType.float32])) - 1.0


def int_range(dt: DType):
    import ml_dtypes  # its iinfo also knows int4 and uint4

    info = ml_dtypes.iinfo(dt.numpy())
    return float(info.min), float(info.max)


def push(bound: float) -> float:
    """How far inside the domain a violating value is pulled: landing exactly on the boundary would
    leave it to the next step's rounding which side it ends on."""
    return 0.05 * max(1.0, abs(bound))


def below(x: torch.Tensor, bound) -> torch.Tensor:
    """Zero where every x <= bound; else, over the violating elements, the distance to a target
    ``push(bound)`` inside the bound."""
    bad = (x > bound).detach()
    return (torch.relu(x - (bound - push(bound))) * bad).sum()


def above(x: torch.Tensor, bound) -> torch.Tensor:
    """Zero where every x >= bound; else as ``below``, mirrored."""
    bad = (x < bound).detach()
    return (torch.relu((bound + push(bound)) - x) * bad).sum()


def away_from_zero(x: torch.Tensor, m: float) -> torch.Tensor:
    """Zero where |x| >= m; the gradient at exactly 0 points to +m (|x| has none there)."""
    side = torch.where(x.detach() >= 0, 1.0, -1.0).to(x.dtype)
    return above(x * side, m)


def magnitude_loss(xs: List[torch.Tensor], bound: float = 1.0) -> torch.Tensor:
    """The fallback for an op whose finite inputs gave a non-finite output with no domain violation
    (an overflow in a product, a sum, a matmul): pull every input into [-bound, bound]."""
    total = torch.zeros(())
    for x in xs:
        if x.numel():
            total = total + torch.relu(x.abs() - bound).mean()
    return total


def int_overflow(exact: torch.Tensor, dt: DType) -> torch.Tensor:
    """How far an integer op's exact result (computed in float) lies outside ``dt``'s range."""
    lo, hi = int_range(dt)
    return above(exact, lo) + below(exact, hi)
