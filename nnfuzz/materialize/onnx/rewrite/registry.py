"""The registry of semantics-preserving rewrites of an ONNX model (the metamorphic oracle's
transformations, one module each) and ``rewrite_model``, which draws and applies them for one test.

A rewrite is ``fn(model, rng, ctx) -> detail``: it edits ``model`` (a copy; a ModelProto) in place,
returns a small JSON-able record of what it did, and raises NotApplicable when the model offers it
nothing to work on. ``ctx`` (RewriteContext) carries what a rewrite may need beyond the proto: the
graph and weights (re-spelling rebuilds the model from them) and the output aliases it adds.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Optional

from onnx import ModelProto

from nnfuzz.materialize.onnx.rewrite.graphs import NotApplicable


@dataclasses.dataclass(frozen=True)
class Rewrite:
    name: str
    fn: Callable
    doc: str


REWRITES: Dict[str, Rewrite] = {}
ORDER_FIRST = ("respell",)  # rebuilds the whole model from the graph: drawn, it goes first


def register(name: str, doc: str):
    def deco(fn):
        REWRITES[name] = Rewrite(name, fn, doc)
        return fn
    return deco


@dataclasses.dataclass
class RewriteContext:
    gir: object = None                 # GraphIR (None: a model without a graph, e.g. a migrated test)
    weights: Optional[dict] = None
    export: object = None              # the ExportSpec the model was written with
    defined: bool = True               # the values keep every op in its domain (the reference is defined)
    aliases: Dict[str, str] = dataclasses.field(default_factory=dict)  # extra output -> the output it copies
    extra: set = dataclasses.field(default_factory=set)  # intermediates exposed as outputs (no counterpart)


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


def kinds_of(record: dict) -> List[str]:
    """The rewrite kinds a meta.json record applied, in order."""
    return [s.get("kind", "?") for s in (record or {}).get("steps", [])]
