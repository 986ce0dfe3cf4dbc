"""Reorder independent nodes: the same graph in another valid topological order (each step picks at
random among the nodes whose inputs are all made)."""
from __future__ import annotations

from onnx import ModelProto

from nnfuzz.materialize.onnx.rewrite.graphs import NotApplicable, reads
from nnfuzz.materialize.onnx.rewrite.registry import register


@register("reorder", "the nodes in another valid topological order")
def reorder(model: ModelProto, rng, ctx) -> dict:
    g = model.graph
    nodes = list(g.node)
    maker = {x: k for k, n in enumerate(nodes) for x in n.output if x}
    needs = [{maker[x] for x in reads(n) if x in maker} for n in nodes]
    done, order = set(), []
    while len(order) < len(nodes):
        ready = [k for k in range(len(nodes)) if k not in done and needs[k] <= done]
        k = ready[int(rng.integers(len(ready)))]
        done.add(k)
        order.append(k)
    if order == list(range(len(nodes))):
        raise NotApplicable("the drawn order is the original one (no independent nodes, or chance)")
    del g.node[:]
    g.node.extend(nodes[k] for k in order)
    moved = sum(a != b for a, b in enumerate(order))
    return {"moved": moved}
