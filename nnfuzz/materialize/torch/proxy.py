"""Proxy derivatives: gradients for ops whose true gradient is zero or undefined almost everywhere,
so the value search can move inputs through them. The forward values never change.

Two mechanisms:
- float ops with flat or stepped graphs (floor, round, sign, relu's flat side, clip outside its
  bounds, ...) get ``slope * (x - x.detach())`` added, exactly zero forward and ``slope`` backward
  (``plus_leak``), either on top of their own gradient or instead of it;
- integer and bool tensors cannot carry gradients in torch, so each one gets a float64 *surrogate*
  that equals its value and carries the gradient of what it was computed from: a comparison's
  surrogate is a sigmoid of the difference, a cast's is its input, an integer op's is the op applied
  to its inputs' surrogates. ``Where`` and casts back to float hand the surrogate's gradient on.
  The surrogate of an integer op is its exact result, so it also tells integer overflow.
"""
from __future__ import annotations

from typing import List, Optional

import torch

from nnfuzz.abstract.ops import binary as B
from nnfuzz.abstract.optable import OpTable
from nnfuzz.abstract.ops import elementwise as E
from nnfuzz.abstract.ops import reduce as R
from nnfuzz.abstract.ops import select as S

# op class -> (slope, replace): the added straight-through gradient, and whether it replaces the
# op's own (wrong-signed or vanishing) gradient or adds to it
PROXY_SLOPES = OpTable()


def proxy_gradient(*op_classes, slope: float = 1.0, replace: bool = False) -> None:
    """Give ``op_classes`` a straight-through gradient of ``slope``, added to theirs or (``replace``)
    instead of it. Forward values are unchanged."""
    for cls in op_classes:
        PROXY_SLOPES[cls] = (slope, replace)


# stepped, or not monotonic (mish, silu and gelu fall left of their minimum and would pull values
# further left): follow the identity instead
proxy_gradient(E.Floor, E.Ceil, E.Round, E.Sign, E.Mish, E.Silu, E.Gelu, E.HardSwish, slope=1.0, replace=True)
# flat outside a region, or saturating (a vanishing gradient, exactly zero in float16): a leak
proxy_gradient(E.Relu, E.Relu6, S.Clip, E.HardSigmoid, E.Hardshrink, E.Softshrink, E.Sigmoid, E.Tanh,
               E.Softsign, E.Erf, E.Atan, E.LogSigmoid, E.Softplus, E.Elu, E.Celu, E.Selu, E.Tanhshrink,
               slope=0.1)


def proxy_for(cls) -> Optional[tuple]:
    return PROXY_SLOPES.lookup(cls)


def with_proxy(out: torch.Tensor, x: torch.Tensor, proxy: tuple) -> torch.Tensor:
    """``out`` (computed from ``x``) with the proxy gradient; the values are unchanged."""
    slope, replace = proxy
    if replace:
        out = out.detach()
    return plus_leak(out, x, slope)


def plus_leak(out: torch.Tensor, x: torch.Tensor, slope: float) -> torch.Tensor:
    """``out`` with ``slope`` added to its gradient w.r.t. ``x``; bit-identical values (``-0.0 + 0.0`` is
    ``+0.0``, so the zero is subtracted: ``-0.0 - 0.0`` stays ``-0.0``)."""
    return out - (slope * (x.detach() - x)).to(out.dtype)


_GREATER = (B.Greater, B.GreaterEqual)
_LESS = (B.Less, B.LessEqual)
_NO_SURROGATE = (R.ArgMax, R.ArgMin, E.IsNan, E.IsInf)


def soft(t: torch.Tensor, s: Optional[torch.Tensor]) -> torch.Tensor:
    """The float64 view of an input: itself for floats, its surrogate (or plain value) otherwise."""
    if t.is_floating_point():
        return t.double()
    return s if s is not None else t.double()


def anchored(hard: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
    """A surrogate equal to ``hard`` with ``f``'s gradient."""
    return hard.double() + (f - f.detach())


def apply_proxies(op, fn, args: List[torch.Tensor], softs: List[Optional[torch.Tensor]], proxy: bool = True):
    """Run ``fn`` (the op's lowering): (outputs, surrogates of the integer/bool outputs).

    With ``proxy`` the outputs carry proxy derivatives and the surrogates carry gradients; without,
    the outputs are the plain lowering's and the surrogates are exact values only (for overflow)."""
    out = fn(op, *args)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if all(o.is_floating_point() for o in outs):
        if proxy:
            px = proxy_for(type(op))
            if px is not None and args[0].is_floating_point():
                outs = [with_proxy(o, args[0], px) for o in outs]
            if any(s is not None for s in softs):
                outs = [_float_from_soft(op, o, args, softs) for o in outs]
        return outs, [None] * len(outs)
    if not proxy:
        softs = [None if s is None else s.detach() for s in softs]
        args = [a.detach() for a in args]
    with torch.set_grad_enabled(proxy and torch.is_grad_enabled()):
        sur = _surrogates(op, outs, args, softs)
    return outs, [None if o.is_floating_point() else s for o, s in zip(outs, sur)]


def _float_from_soft(op, out, args, softs):
    """A float output of an op with integer/bool inputs: pass their surrogates' gradient on."""
    if isinstance(op, S.Cast) and softs[0] is not None:
        return out + (softs[0] - softs[0].detach()).to(out.dtype)
    if isinstance(op, S.Where) and softs[0] is not None:
        c = softs[0]
        return out + ((c - c.detach()) * (soft(args[1], softs[1]) - soft(args[2], softs[2])).detach()).to(out.dtype)
    return out


def _surrogates(op, outs, args, softs) -> List[Optional[torch.Tensor]]:
    """Float64 surrogates of an op's outputs (None where none makes sense)."""
    if isinstance(op, _NO_SURROGATE):
        return [None] * len(outs)
    xs = [soft(a, s) for a, s in zip(args, softs)]
    hard = outs[0]
    if isinstance(op, _GREATER + _LESS + (B.Equal,)):
        a, b = xs
        d = a - b if isinstance(op, _GREATER) else b - a if isinstance(op, _LESS) else -(a - b).abs()
        return [anchored(hard, torch.sigmoid(d))]
    if isinstance(op, (B.And, B.Or, B.Xor, B.Not)):
        if isinstance(op, B.Not):
            return [anchored(hard, 1 - xs[0])]
        p, q = xs
        f = p * q if isinstance(op, B.And) else p + q - p * q if isinstance(op, B.Or) else p + q - 2 * p * q
        return [anchored(hard, f)]
    if isinstance(op, S.Cast):
        if hard.dtype == torch.bool:
            return [anchored(hard, torch.tanh(xs[0].abs()))]
        return [anchored(hard, xs[0])]  # truncation and wrapping follow the identity
    if isinstance(op, S.Where):
        c, x, y = xs
        return [torch.where(args[0], x, y) + (c - c.detach()) * (x - y).detach()]
    # any other op: its lowering on the surrogates, i.e. its exact result with their gradients
    try:
        out = _lowering(op)(op, *xs)
    except (RuntimeError, TypeError, ValueError):
        return [None] * len(outs)
    res = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(res) != len(outs):
        return [None] * len(outs)
    px = proxy_for(type(op))
    sur = []
    for r, h in zip(res, outs):
        ok = r.is_floating_point() and r.shape == h.shape
        sur.append(None if not ok else with_proxy(r, xs[0], px) if px is not None else r)
    return sur


def _lowering(op):
    from nnfuzz.materialize.torch.lowering import lowering_for

    return lowering_for(type(op))
