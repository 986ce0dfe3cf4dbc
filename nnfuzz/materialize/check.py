"""The safety check of one instruction, shared by the value search (``search.py``) and value-aware
generation (``generate/valueaware.py``): run the op's torch lowering on its inputs' values and say
whether its outputs are finite, its inputs inside its domain (the loss of ``torch/losses.py`` is zero) and its
integer results within their dtype.

The check is the search's forward step: when the instruction is unsafe it also returns the loss the
search minimises. Done once per graph when nothing is wrong, so it avoids what it can: ops without
a domain loss, integer output or non-finite result cost one lowering call and one ``isfinite``.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import numpy as np
import torch

from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.torch.losses import int_overflow, int_range, loss_for, magnitude_loss
from nnfuzz.materialize.torch.lowering import lowering_error
from nnfuzz.materialize.torch.proxy import apply_proxies, soft

_LOSSES: Dict[type, object] = {}


def loss_of(cls):
    """``loss_for(cls)``, built once per op class (it builds a closure per call)."""
    if cls not in _LOSSES:
        _LOSSES[cls] = loss_for(cls)
    return _LOSSES[cls]


def check_inst(inst, fn, lf, env: dict, sur: dict, types, proxy: bool, int64_bits: int,
               where: str) -> Tuple[Optional[object], bool, bool]:
    """Run ``inst`` (lowering ``fn``, loss ``lf`` or None) on ``env`` (var -> tensor) and ``sur``
    (var -> float64 surrogate of an integer/bool var), and store its outputs there when they are finite.

    Returns ``(term, finite, violated)``: ``term`` is None when the instruction is safe, else the loss
    to minimise (its domain loss when ``violated``, the magnitude fallback when only non-finite).
    ``types`` maps a var to its AbsTensor (``gir.vars``); ``where`` names the caller in a lowering's error."""
    args = [env[v] for v in inst.inputs]
    softs = [sur.get(v) for v in inst.inputs]
    try:
        outs, osur = apply_proxies(inst.op, fn, args, softs, proxy)
    except Exception as e:  # the same lowering runs again for the reference: a bug in the op
        raise lowering_error(inst, _Vars(types), e, where) from e
    finite = all(all_finite(o) for o in outs if o.is_floating_point())
    overflow = [(s, _int_dtype(types[v].dtype, int64_bits)) for v, s in zip(inst.outputs, osur)
                if s is not None and types[v].dtype.is_int]
    if overflow and not torch.is_grad_enabled():  # a check, not a step: only the ones that overflow
        overflow = [(s, dt) for s, dt in overflow if not _fits(s, dt)]
    if finite and lf is None and not overflow:  # nothing to check: most ops
        _store(inst, outs, osur, env, sur)
        return None, True, False
    xs = [soft(a, s) for a, s in zip(args, softs)]
    term = lf(inst.op, xs, [types[v].dtype for v in inst.inputs]) if lf is not None else torch.zeros(())
    for s, dt in overflow:
        term = term + int_overflow(s, dt)
    # a NaN term (a surrogate that is NaN: a shift by 154350 makes x * 2^y inf, and inf - inf follows) is
    # a value the check cannot place inside the domain: violated, with a finite loss for the search
    violated = not float(term.detach()) <= 0
    if bool(torch.isnan(term.detach())):
        term = torch.nan_to_num(term, nan=1.0)
    if finite:
        _store(inst, outs, osur, env, sur)
        return (term if violated else None), True, violated
    if not violated:
        term = magnitude_loss([x for x in xs if x.numel()])
    return term, False, violated


def all_finite(t) -> bool:
    """No NaN/Inf in the float tensor ``t`` (numpy's test: a third of torch's time on small tensors)."""
    if t.dtype == torch.bfloat16:
        return bool(torch.isfinite(t).all())
    return bool(np.isfinite(t.detach().numpy()).all())


def _int_dtype(dt: DType, int64_bits: int) -> DType:
    """The range an integer result must fit: int64 computed in 32 bits by some systems fits int32."""
    return DType.int32 if dt is DType.int64 and int64_bits == 32 else dt


def _fits(exact, dt: DType) -> bool:
    """Every exact integer result lies in ``dt``'s range (what ``int_overflow`` is zero for)."""
    if not exact.numel():
        return True
    lo, hi = int_range(dt)
    a = exact.detach().numpy()
    return bool(a.min() >= lo) and bool(a.max() <= hi)


def _store(inst, outs, osur, env, sur) -> None:
    env.update(zip(inst.outputs, outs))
    sur.update((v, s) for v, s in zip(inst.outputs, osur) if s is not None)


class _Vars:
    """The ``gir``-like view ``lowering_error`` reads the input types from."""

    def __init__(self, types):
        self.vars = types
