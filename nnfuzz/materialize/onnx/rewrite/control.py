"""Wrap a region in control flow that runs it exactly once: an ``If`` whose condition is a constant
true (both branches hold the region, so the else branch types like the then branch), or a ``Loop``
with trip count 1 whose body makes the region's values as scan outputs (squeezed back to their shape
after the loop). Bodies read the outer values directly; every value they make is renamed so names stay
unique across scopes."""
from __future__ import annotations

import numpy as np
from onnx import ModelProto, TensorProto, TypeProto, helper, numpy_helper

from nnfuzz.materialize.onnx.rewrite.graphs import (NotApplicable, copy_nodes, fresh_names, region, region_io,
                                                    replace_region, value_types)
from nnfuzz.materialize.onnx.rewrite.registry import register


def _const(model: ModelProto, rng, value, name: str):
    """(nodes, name) of a constant: an initializer or a Constant node (drawn)."""
    t = numpy_helper.from_array(np.asarray(value), name)
    if rng.integers(2):
        model.graph.initializer.append(t)
        return [], name
    return [helper.make_node("Constant", [], [name], name=f"{name}_node", value=t)], name


def _out_info(name: str, typ: TypeProto, elem_only: bool = False):
    info = helper.make_empty_tensor_value_info(name)
    info.type.CopyFrom(typ)
    if elem_only:
        info.type.tensor_type.ClearField("shape")
    return info


def _typed_region(model: ModelProto, rng):
    g = model.graph
    picked = region(g, rng)
    ins, outs = region_io(g, picked)
    types = value_types(model)
    if any(o not in types or not types[o].HasField("tensor_type") for o in outs):
        raise NotApplicable("a region output has no inferred tensor type")
    return picked, outs, types


@register("if", "a region inside an If whose condition is a constant true")
def if_true(model: ModelProto, rng, ctx) -> dict:
    g = model.graph
    picked, outs, types = _typed_region(model, rng)
    p = fresh_names(model, "if")
    branches = []
    for side in ("then", "else"):
        nodes, made = copy_nodes(g, picked, f"{p}{side}_")
        branches.append(helper.make_graph(nodes, f"{p}{side}", [], [_out_info(made[o], types[o]) for o in outs]))
    pre, cond = _const(model, rng, np.array(True), f"{p}cond")
    node = helper.make_node("If", [cond], outs, name=f"{p}node", then_branch=branches[0], else_branch=branches[1])
    replace_region(g, picked, pre + [node])
    return {"nodes": len(picked), "ops": sorted({g.op_type for g in branches[0].node})}


@register("loop", "a region inside a Loop with trip count 1 (its values as scan outputs, squeezed after)")
def loop_once(model: ModelProto, rng, ctx) -> dict:
    g = model.graph
    picked, outs, types = _typed_region(model, rng)
    p = fresh_names(model, "loop")
    nodes, made = copy_nodes(g, picked, f"{p}body_")
    it = helper.make_tensor_value_info(f"{p}iter", TensorProto.INT64, [])
    cond_in = helper.make_tensor_value_info(f"{p}cond_in", TensorProto.BOOL, [])
    cond_out = helper.make_tensor_value_info(f"{p}cond_out", TensorProto.BOOL, [])
    nodes.append(helper.make_node("Identity", [f"{p}cond_in"], [f"{p}cond_out"], name=f"{p}cond_id"))
    body = helper.make_graph(nodes, f"{p}body", [it, cond_in],
                             [cond_out] + [_out_info(made[o], types[o], elem_only=True) for o in outs])
    pre, trip = _const(model, rng, np.array(1, dtype=np.int64), f"{p}trip")
    cond = ""
    if rng.integers(2):
        more, cond = _const(model, rng, np.array(True), f"{p}cond")
        pre += more
    scans = [f"{p}scan_{o}" for o in outs]
    after = [helper.make_node("Loop", [trip, cond], scans, name=f"{p}node", body=body)]
    more, axes = _const(model, rng, np.array([0], dtype=np.int64), f"{p}axes")
    pre += more
    after += [helper.make_node("Squeeze", [s, axes], [o], name=f"{p}squeeze{k}") for k, (s, o) in enumerate(zip(scans, outs))]
    replace_region(g, picked, pre + after)
    return {"nodes": len(picked), "ops": sorted({n.op_type for n in nodes[:-1]}), "condition": "const" if cond else "none"}
