"""The static check of a dynamic test (docs/dynamic-shapes.md): when the dynamic compile fails at shape k,
the static model of shape k is run as that compile had been run, compiled once and inferred k + 1 times,
and its last inference is judged. Used by the dynamic oracle (meta.json ``dynamic.static``), the replay and
the reduction of its bugs, and ``oracle=static`` (the static side it compares with)."""
from __future__ import annotations

import dataclasses
from typing import Optional

STATIC_PASSES = "passes"  # meta.json dynamic.static: the static model of the failing shape passes
AGAIN = "fails when inferred again"  # ... fails on its last inference, right on its first
DYNAMIC_TERM, AGAIN_TERM = "dynamic", "again"  # the signature terms of ``static_term`` (known.generic reads them)
RECOMPILE = "recompile"  # the signature term and divergence of a recompilation no guard asks for (no static check)


def inferred_as_dynamic(run, payload: bytes, inputs, k: int):
    """The static model ``payload`` of shape ``k`` run as the dynamic compile had run when it reached shape
    ``k``: compiled once and inferred k + 1 times on shape ``k``'s ``inputs`` (``run(payload, [inputs, ...])``,
    a sandbox's run). Its RunResult: ``outputs`` the last inference's (the one judged), ``shapes`` each
    inference's; None where ``run`` gave None. Why: a system may answer a compiled model's later inferences
    differently from its first (bugs/kept/0085: OpenVINO's Mul(GatherElements(constant), x) is right only on
    the first), so a static model inferred once would pass where its (k+1)-th inference fails as the dynamic
    one did, and a fault of repeated inference would be taken for one of symbolic dims."""
    res = run(payload, [dict(inputs) for _ in range(k + 1)])
    return dataclasses.replace(res, outputs=res.shapes[-1]) if res is not None and res.ok else res


def static_check(run, payload: bytes, inputs, k: int, verdict_of) -> Optional[str]:
    """meta.json ``dynamic.static`` for a dynamic test that failed at shape ``k``: the static model of shape
    ``k`` inferred as the dynamic compile was (inferred_as_dynamic), its last inference judged by
    ``verdict_of(RunResult)``: STATIC_PASSES (only the dynamic form fails), "fails when inferred again
    (<label>)" (its first inference is right: the fault needs a repeated inference, not symbolic dims),
    "fails (<label>)", or None when the campaign's time bound cut the run short."""
    res = inferred_as_dynamic(run, payload, inputs, k)
    if res is None:
        return None
    v = verdict_of(res)
    if not v.is_bug:
        return STATIC_PASSES
    if k > 0 and res.ok and not verdict_of(dataclasses.replace(res, outputs=res.shapes[0])).is_bug:
        return f"{AGAIN} ({v.label})"
    return f"fails ({v.label})"


def static_term(static) -> Optional[str]:
    """The signature term a dynamic bug's ``dynamic.static`` (static_check) gives: "dynamic" (only the dynamic
    form fails), "again" (the static model fails too, on a repeated inference only), else None."""
    if static == STATIC_PASSES:
        return DYNAMIC_TERM
    return AGAIN_TERM if isinstance(static, str) and static.startswith(AGAIN) else None
