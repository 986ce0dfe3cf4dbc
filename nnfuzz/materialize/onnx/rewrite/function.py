"""Wrap a region in an ONNX local function (FunctionProto) and call it; or in a chain of functions,
each calling the next, the innermost holding the region. Function bodies see only their formal
inputs, so every value the region reads (graph inputs and initializers included) is passed in."""
from __future__ import annotations

from onnx import FunctionProto, ModelProto, helper

from nnfuzz.materialize.onnx.rewrite.graphs import fresh_names, region, region_io, replace_region
from nnfuzz.materialize.onnx.rewrite.registry import register

DOMAIN = "nnfuzz.rewrite"
FUNCTIONS_IR = 8  # the first IR version with model-local functions


def _main_opset(model: ModelProto) -> int:
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def _use_domain(model: ModelProto) -> None:
    if not any(o.domain == DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(DOMAIN, 1))
    model.ir_version = max(model.ir_version, FUNCTIONS_IR)


def _function(name: str, ins, outs, nodes, opset: int) -> FunctionProto:
    return helper.make_function(DOMAIN, name, list(ins), list(outs), list(nodes),
                                [helper.make_opsetid("", opset), helper.make_opsetid(DOMAIN, 1)])


def wrap(model: ModelProto, rng, depth: int) -> dict:
    """Move a region into ``depth`` nested functions (the outermost called from the graph)."""
    g = model.graph
    picked = region(g, rng)
    ins, outs = region_io(g, picked)
    opset = _main_opset(model)
    prefix = fresh_names(model, "f")
    body = [_copy(g.node[k]) for k in picked]
    names = []
    for level in range(depth):
        name = f"{prefix}{depth - 1 - level}"
        model.functions.append(_function(name, ins, outs, body, opset))
        names.append(name)
        body = [helper.make_node(name, ins, outs, name=f"{name}_call", domain=DOMAIN)]
    replace_region(g, picked, body)
    _use_domain(model)
    return {"nodes": len(picked), "ops": sorted(set(_ops(model, names[0]))), "depth": depth}


def _copy(n):
    from onnx import NodeProto

    c = NodeProto()
    c.CopyFrom(n)
    return c


def _ops(model: ModelProto, innermost: str):
    f = next(f for f in model.functions if f.name == innermost)
    return [n.op_type for n in f.node]


@register("function", "a region becomes a local function (FunctionProto) called once")
def function(model: ModelProto, rng, ctx) -> dict:
    return wrap(model, rng, 1)


@register("function-chain", "a region in a chain of 2-3 nested functions, each calling the next")
def function_chain(model: ModelProto, rng, ctx) -> dict:
    return wrap(model, rng, int(rng.integers(2, 4)))
