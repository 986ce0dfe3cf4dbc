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

from nnfuzz.abstract.optable import OpTable
from nnfuzz.ops import load_aspect
from nnfuzz.errors import OpDefinitionError

# op class -> (slope, replace): the added straight-through gradient, and whether it replaces the
# op's own (wrong-signed or vanishing) gradient or adds to it
PROXY_SLOPES = OpTable("proxy slope")
# op class -> fn(op, outs, xs, args) -> one float64 surrogate (or None) per output of an op with
# integer/bool outputs; ``xs`` are the inputs' float64 views. Default: ``lowered``.
SURROGATES = OpTable("surrogate")
surrogate = SURROGATES.register
# op class -> fn(op, out, args, softs) -> ``out`` (a float output of an op with integer/bool inputs)
# carrying the gradient of those inputs' surrogates. Default: ``out`` as it is.
SOFT_FLOATS = OpTable("soft float")
soft_float = SOFT_FLOATS.register


def proxy_gradient(*op_classes, slope: float = 1.0, replace: bool = False) -> None:
    """Give ``op_classes`` a straight-through gradient of ``slope``, added to theirs or (``replace``)
    instead of it. Forward values are unchanged."""
    for cls in op_classes:
        PROXY_SLOPES[cls] = (slope, replace)


def proxy_for(cls) -> Optional[tuple]:
    _load()
    return PROXY_SLOPES.lookup(cls)


def _load() -> None:
    load_aspect("search")


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
    fn = SOFT_FLOATS.lookup(type(op))
    return out if fn is None else fn(op, out, args, softs)


def _surrogates(op, outs, args, softs) -> List[Optional[torch.Tensor]]:
    """Float64 surrogates of an op's outputs (None where none makes sense)."""
    _load()
    xs = [soft(a, s) for a, s in zip(args, softs)]
    fn = SURROGATES.lookup(type(op))
    return (lowered if fn is None else fn)(op, outs, xs, args)


def no_surrogate(op, outs, xs, args) -> list:
    """For ops whose integer outputs are not a function of their inputs' values one can follow
    (indices of a maximum, NaN/Inf flags): no surrogate, and no overflow to check."""
    return [None] * len(outs)


def lowered(op, outs, xs, args) -> list:
    """The default surrogate: the op's lowering on its inputs' surrogates, i.e. its exact result
    with their gradients (and, for an integer op, the exact value that tells an overflow). An op
    whose lowering cannot run on float64 surrogates registers ``@surrogate(Op)`` (e.g.
    ``no_surrogate``); a lowering that raises here is an error in the op's definition."""
    try:
        out = _lowering(op)(op, *xs)
    except Exception as e:
        raise OpDefinitionError(
            f"the torch lowering of {op!r} raised {type(e).__name__}: {e} on the float64 surrogates of its "
            f"integer/bool inputs (the value search's overflow check); register a surrogate for it with "
            f"@surrogate({op.name}) from nnfuzz.materialize.torch.proxy (no_surrogate: no overflow check)") from e
    res = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(res) != len(outs):
        raise OpDefinitionError(f"the torch lowering of {op!r} gave {len(res)} outputs on float64 surrogates "
                                f"and {len(outs)} on its inputs")
    px = proxy_for(type(op))
    sur = []
    for r, h in zip(res, outs):
        ok = r.is_floating_point() and r.shape == h.shape
        sur.append(None if not ok else with_proxy(r, xs[0], px) if px is not None else r)
    return sur


def _lowering(op):
    from nnfuzz.materialize.torch.lowering import lowering_for

    return lowering_for(type(op))
