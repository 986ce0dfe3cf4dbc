"""Split outputs: fan an output out through Identity into a second graph output (compared with the
first: ``RewriteContext.aliases``), or expose an intermediate value as an extra graph output (which
a compiler must then keep; not compared, it has no counterpart)."""
from __future__ import annotations

from onnx import ModelProto, helper

from nnfuzz.materialize.onnx.rewrite.graphs import NotApplicable, fresh_names, rename_in, value_types
from nnfuzz.materialize.onnx.rewrite.registry import register


def _info(name, typ):
    info = helper.make_empty_tensor_value_info(name)
    info.type.CopyFrom(typ)
    return info


@register("fan-out", "an output made once and copied by Identity into itself and an extra output")
def fan_out(model: ModelProto, rng, ctx) -> dict:
    g = model.graph
    made = {x for n in g.node for x in n.output}
    cands = [o for o in g.output if o.name in made and o.name not in ctx.extra]
    if not cands:
        raise NotApplicable("no output is made by a node")
    out = cands[int(rng.integers(len(cands)))]
    p = fresh_names(model, "fan")
    pre, copy = f"{p}pre", f"{p}copy"
    rename_in(g.node, {out.name: pre})
    g.node.extend([helper.make_node("Identity", [pre], [out.name], name=f"{p}a"),
                   helper.make_node("Identity", [pre], [copy], name=f"{p}b")])
    g.output.append(_info(copy, out.type))
    ctx.aliases[copy] = out.name
    return {"output": out.name, "copy": copy}


@register("extra-output", "an intermediate value exposed as an extra graph output")
def extra_output(model: ModelProto, rng, ctx) -> dict:
    g = model.graph
    outs = {o.name for o in g.output}
    types = value_types(model)
    cands = [x for n in g.node for x in n.output if x and x not in outs and x in types
             and types[x].HasField("tensor_type") and types[x].tensor_type.elem_type]
    if not cands:
        raise NotApplicable("no intermediate value with a known type")
    x = cands[int(rng.integers(len(cands)))]
    g.output.append(_info(x, types[x]))
    ctx.extra.add(x)
    return {"value": x}
