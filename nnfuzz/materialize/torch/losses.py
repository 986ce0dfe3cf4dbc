"""Domain losses: for each operator with a vulnerable domain, a loss that is zero exactly when its
inputs are safe (with a margin) and grows with the distance from the safe region.

A loss is ``fn(op, xs, dtypes) -> scalar tensor``: ``xs`` are the op's inputs as float32 tensors
(integer and bool inputs as their float surrogates), ``dtypes`` their DTypes in the model. Register
one with ``@domain_loss(OpClass, ...)``; lookup walks the class's MRO, like the torch lowerings, so a
user's operator module registers its own next to its lowering.

The margins keep values away from the edge of the domain, where another system's rounding (a
flushed subnormal, a fast-math log) would turn a finite reference into NaN/Inf on the other side.
"""
from __future__ import annotations

import math
from typing import Callable, List, Optional

import torch

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.optable import OpTable
from nnfuzz.abstract.ops import binary as B
from nnfuzz.abstract.ops import elementwise as E
from nnfuzz.abstract.ops import select as S
from nnfuzz.abstract.ops import tfonly as T

DOMAIN_LOSSES = OpTable()
domain_loss = DOMAIN_LOSSES.register

FMAX = {DType.float16: 65504.0, DType.bfloat16: 3.38e38, DType.float32: 3.40e38, DType.float64: 1.79e308}
# |divisor| (and log argument) margin per dtype: well above the subnormal range of the half types
MARGIN = {DType.float16: 1e-2, DType.bfloat16: 1e-2, DType.float32: 1e-3, DType.float64: 1e-6}


def loss_for(cls) -> Optional[Callable]:
    return DOMAIN_LOSSES.lookup(cls)


def margin(dt: DType) -> float:
    return MARGIN.get(dt, 1e-3)


def exp_limit(dt: DType) -> float:
    """The largest x whose exp() is comfortably finite in ``dt`` (one below log(max))."""
    return math.log(FMAX.get(dt, FMAX[DType.float32])) - 1.0


def int_range(dt: DType):
    import numpy as np

    info = np.iinfo(dt.numpy())
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


# ---- the library's vulnerable ops ---------------------------------------------------------------
@domain_loss(B.Div, B.Fmod, T.FloorMod)
def _divisor(op, xs, dts):
    return away_from_zero(xs[1], margin(dts[1]))


@domain_loss(T.DivNoNan)
def _divisor_zero_or_away(op, xs, dts):
    """DivNoNan defines y == 0 (the result is 0); any other y must be a safe divisor: TF flushes
    subnormals to zero, so a tiny divisor is 0 there and not in torch."""
    y = xs[1]
    return away_from_zero(y[y.detach() != 0], margin(dts[1]))


@domain_loss(E.Reciprocal)
def _reciprocal(op, xs, dts):
    return away_from_zero(xs[0], margin(dts[0]))


@domain_loss(E.Log, E.Log2, E.Rsqrt)
def _positive(op, xs, dts):
    return above(xs[0], margin(dts[0]))


@domain_loss(E.Log1p)
def _log1p(op, xs, dts):
    return above(xs[0], -1.0 + 10 * margin(dts[0]))


@domain_loss(E.Sqrt)
def _sqrt(op, xs, dts):
    return above(xs[0], 0.0)


@domain_loss(E.Asin, E.Acos)
def _unit(op, xs, dts):
    return below(xs[0].abs(), 1.0)


@domain_loss(E.Exp, E.Softplus, E.Mish)
def _exp(op, xs, dts):
    # softplus and mish are exp-based in ONNX (log(exp(x) + 1)); torch's threshold hides the overflow
    return below(xs[0], exp_limit(dts[0]))


@domain_loss(E.Tan)
def _tan(op, xs, dts):
    # away from the poles at pi/2 + k*pi, where cos(x) vanishes
    return above(torch.cos(xs[0]).abs(), 10 * margin(dts[0]))


@domain_loss(E.Square)
def _square(op, xs, dts):
    if dts[0].is_float:
        return below(xs[0].abs(), math.sqrt(FMAX[dts[0]]) / 2)
    return torch.zeros(())  # integer overflow: every integer op's result is checked by the search


@domain_loss(B.Pow)
def _pow(op, xs, dts):
    # a positive base (a negative one with a fractional exponent is NaN, 0 ** negative is inf) and a
    # result whose log, y * log(x), stays below the dtype's exp limit
    # (the second only where the base is already positive: it must not pull the exponent towards 0
    # while the base is still being moved)
    x, y = xs[0], xs[1]
    m = margin(dts[0])
    base = above(x, m)
    safe = (x > m).detach()
    big = below(torch.where(safe, y * torch.log(torch.clamp(x, min=m)), torch.zeros_like(x)).abs(), exp_limit(dts[0]) / 2)
    return base + big


@domain_loss(S.Cast)
def _cast(op, xs, dts):
    src, to = dts[0], op.to
    x = xs[0]
    if src.is_float and to.is_int:
        # float-to-int of a value the target cannot hold is undefined behaviour in C
        lo, hi = int_range(to)
        lo = 0.0 if to is DType.uint8 else lo + 1
        return above(x, lo) + below(x, hi - 1)
    if src.is_int and to.is_int:
        # narrowing wraps (implementation-defined); it would also turn the gradient's way around
        lo, hi = int_range(to)
        return above(x, lo) + below(x, hi)
    if to is DType.float16 or (src is DType.float64 and to in (DType.float32, DType.bfloat16)):
        return below(x.abs(), FMAX[to] / 2)  # a value the narrower float cannot hold becomes inf
    return torch.zeros(())


def int_overflow(exact: torch.Tensor, dt: DType) -> torch.Tensor:
    """How far an integer op's exact result (computed in float) lies outside ``dt``'s range."""
    lo, hi = int_range(dt)
    return above(exact, lo) + below(exact, hi)
