"""The registry of semantics-preserving rewrites of an ONNX model (the metamorphic oracle's
transformations, one module each, which register here; drawing.py's ``rewrite_model`` draws and
applies them for one test).

A rewrite is ``fn(model, rng, ctx) -> detail``: it edits ``model`` (a copy; a ModelProto) in place,
returns a small JSON-able record of what it did, and raises NotApplicable when the model offers it
nothing to work on. ``ctx`` (RewriteContext) carries what a rewrite may need beyond the proto: the
graph and weights (re-spelling rebuilds the model from them) and the output aliases it adds.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Optional


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


def kinds_of(record: dict) -> List[str]:
    """The rewrite kinds a meta.json record applied, in order."""
    return [s.get("kind", "?") for s in (record or {}).get("steps", [])]
