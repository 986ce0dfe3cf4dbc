"""Drawing and applying the registered rewrites (registry.py) for one test of the metamorphic oracle
(nnfuzz/oracles/metamorphic.py): ``load_all`` imports every rewrite module, ``rewrite_model`` draws 1
or 2 rewrites from the model's seed and applies those the ONNX checker accepts."""
from __future__ import annotations

from typing import Dict, List, Optional

from onnx import ModelProto

from nnfuzz.materialize.onnx.rewrite.graphs import NotApplicable
from nnfuzz.materialize.onnx.rewrite.registry import ORDER_FIRST, REWRITES, Rewrite, RewriteContext


def load_all() -> Dict[str, Rewrite]:
    """Import every rewrite module (each registers its rewrites) and return the registry."""
    from nnfuzz.materialize.onnx.rewrite import control, function, outputs, reorder, respell  # noqa: F401

    return REWRITES


def rewrite_model(model: ModelProto, seed: int, ctx: Optional[RewriteContext] = None,
                  kinds: Optional[List[str]] = None, steps: Optional[int] = None):
    """(the rewritten copy of ``model``, its record for meta.json): 1 or 2 rewrites drawn from ``kinds``
    (default: all) with an RNG seeded by ``seed``. Each step must pass the full ONNX checker (strict
    shape inference) or it is skipped: a rewrite can hide a value ONNX's inference computes from
    constants (a shape read by Shape and Slice, moved into an If, is no longer known to the Resize that
    takes it as ``sizes``), and the checker and the systems built on its inference then reject a model
    that is still right. NotApplicable when none of the drawn ones applies."""
    import numpy as np

    from nnfuzz.errors import ConfigError

    table = load_all()
    kinds = list(kinds or sorted(table))
    unknown = [k for k in kinds if k not in table]
    if unknown:
        raise ConfigError(f"unknown rewrite(s) {unknown}; known: {sorted(table)}")
    ctx = ctx or RewriteContext()
    rng = np.random.default_rng([seed & 0xFFFFFFFF, 16])
    n = steps if steps is not None else int(rng.integers(1, 3))
    drawn = [kinds[int(rng.integers(len(kinds)))] for _ in range(n)]
    drawn.sort(key=lambda k: k not in ORDER_FIRST)
    out = ModelProto()
    out.CopyFrom(model)
    done, skipped = [], []
    for kind in drawn:
        trial = ModelProto()
        trial.CopyFrom(out)
        aliases = dict(ctx.aliases), set(ctx.extra)
        try:
            detail = table[kind].fn(trial, rng, ctx)
            why = _rejection(trial)
            if why is not None:
                raise NotApplicable(f"the ONNX checker rejects the result: {why}")
        except NotApplicable as e:
            ctx.aliases, ctx.extra = aliases
            skipped.append({"kind": kind, "why": str(e)[:300]})
            continue
        out = trial
        done.append({"kind": kind, **detail})
    if not done:
        raise NotApplicable("; ".join(f"{s['kind']}: {s['why']}" for s in skipped))
    return out, {"seed": seed, "steps": done, "skipped": skipped, "aliases": dict(ctx.aliases)}


def _rejection(model: ModelProto) -> Optional[str]:
    import onnx

    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        return str(e).strip()[:300]
    return None
