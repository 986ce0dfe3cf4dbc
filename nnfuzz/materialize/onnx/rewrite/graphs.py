"""Graph surgery the rewrites share: who produces and who reads each value (a node with a subgraph,
If or Loop, reads the outer values its body names), a random convex connected region of nodes, the
values a region reads and the ones read after it, renaming, and the inferred type of every value.

A region is a weakly connected set of nodes inside a contiguous run of the topological order: no path
leaves it and comes back (the run is contiguous), so it can become one node (a function call, an If,
a Loop) placed where the run was, and the order stays topological.
"""
from __future__ import annotations

from typing import Dict, List, Set, Tuple

from onnx import GraphProto, ModelProto, NodeProto, TypeProto, shape_inference


class NotApplicable(Exception):
    """This rewrite cannot apply to this model (too few nodes, no value of the kind it needs)."""


def reads(node: NodeProto) -> List[str]:
    """The values ``node`` reads: its inputs, and the outer values its subgraphs name."""
    out = [x for x in node.input if x]
    for a in node.attribute:
        for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
            out.extend(sorted(outer_reads(g)))
    return out


def outer_reads(g: GraphProto) -> Set[str]:
    """Names ``g`` reads that neither it (inputs, initializers, nodes) nor its subgraphs define."""
    defined = {i.name for i in g.input} | {i.name for i in g.initializer}
    used: Set[str] = set()
    for n in g.node:
        used.update(x for x in reads(n) if x not in defined)
        defined.update(x for x in n.output if x)
    used.update(o.name for o in g.output if o.name not in defined)
    return used


def region(graph: GraphProto, rng, min_nodes: int = 1) -> List[int]:
    """Indices (ascending) of a random convex, weakly connected region of ``graph``'s nodes that
    produces at least one value read after it. NotApplicable when the graph has too few nodes."""
    nodes = list(graph.node)
    if len(nodes) < min_nodes:
        raise NotApplicable(f"the graph has {len(nodes)} nodes")
    for _ in range(8):
        lo = int(rng.integers(len(nodes)))
        hi = int(rng.integers(lo + 1, min(len(nodes), lo + 1 + int(rng.integers(1, 9))) + 1))
        picked = _component(nodes, lo, hi)
        if len(picked) >= min_nodes and region_io(graph, picked)[1]:
            return picked
    raise NotApplicable("no region with an output read after it")


def _component(nodes, lo: int, hi: int) -> List[int]:
    """The nodes of [lo, hi) weakly connected to node ``lo`` (through values made inside the run)."""
    made = {x: k for k in range(lo, hi) for x in nodes[k].output if x}
    keep, todo = {lo}, [lo]
    while todo:
        k = todo.pop()
        for j in range(lo, hi):
            if j in keep:
                continue
            linked = any(made.get(x) == j for x in reads(nodes[k])) or any(made.get(x) == k for x in reads(nodes[j]))
            if linked:
                keep.add(j)
                todo.append(j)
    return sorted(keep)


def region_io(graph: GraphProto, picked: List[int]) -> Tuple[List[str], List[str]]:
    """(values the region reads from outside it, values it makes that are read after it or are graph
    outputs), each in first-use order."""
    inside = set(picked)
    made = [x for k in picked for x in graph.node[k].output if x]
    made_set = set(made)
    ins: List[str] = []
    for k in picked:
        for x in reads(graph.node[k]):
            if x not in made_set and x not in ins:
                ins.append(x)
    later: Set[str] = {o.name for o in graph.output}
    for k, n in enumerate(graph.node):
        if k not in inside:
            later.update(reads(n))
    return ins, [x for x in made if x in later]


def value_types(model: ModelProto) -> Dict[str, TypeProto]:
    """The inferred type of every value of the main graph (inputs, initializers, node outputs)."""
    inferred = shape_inference.infer_shapes(model)
    g = inferred.graph
    types = {v.name: v.type for v in list(g.input) + list(g.value_info) + list(g.output)}
    for t in g.initializer:
        tp = TypeProto()
        tp.tensor_type.elem_type = t.data_type
        for d in t.dims:
            tp.tensor_type.shape.dim.add().dim_value = d
        types.setdefault(t.name, tp)
    return types


def rename_in(nodes, mapping: Dict[str, str]) -> None:
    """Rename values in ``nodes``: inputs, outputs, and inside their subgraphs (inputs, node values,
    outputs)."""
    for n in nodes:
        for seq in (n.input, n.output):
            for k, v in enumerate(seq):
                if v in mapping:
                    seq[k] = mapping[v]
        for a in n.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                rename_in(g.node, mapping)
                for o in list(g.output) + list(g.input):
                    if o.name in mapping:
                        o.name = mapping[o.name]


def fresh_names(model: ModelProto, prefix: str) -> str:
    """A prefix no value or function of ``model`` starts with (names stay unique across scopes)."""
    text = model.SerializeToString()
    k = 0
    while f"{prefix}{k}_".encode() in text:
        k += 1
    return f"{prefix}{k}_"


def defined_in(node: NodeProto) -> List[str]:
    """Every name ``node`` defines: its outputs and, in its subgraphs at any depth, their inputs and the
    outputs of their nodes."""
    out = [x for x in node.output if x]
    for a in node.attribute:
        for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
            out.extend(i.name for i in g.input)
            for n in g.node:
                out.extend(defined_in(n))
    return out


def copy_nodes(graph: GraphProto, picked: List[int], prefix: str) -> Tuple[List[NodeProto], Dict[str, str]]:
    """Copies of the region's nodes with every name they define renamed ``prefix + name``, in nested
    bodies too (two copies of a region holding a Loop must not share its body's names: ONNX wants
    every name in a model defined once), and the node names too; the renaming map."""
    made = {x: prefix + x for k in picked for x in defined_in(graph.node[k])}
    out = []
    for k in picked:
        n = NodeProto()
        n.CopyFrom(graph.node[k])
        n.name = prefix + (n.name or n.op_type)
        out.append(n)
    rename_in(out, made)
    return out, made


def replace_region(graph: GraphProto, picked: List[int], new_nodes: List[NodeProto]) -> None:
    """Put ``new_nodes`` where the region's first node was and drop the region."""
    nodes = list(graph.node)
    at = picked[0]
    keep = [n for k, n in enumerate(nodes) if k not in set(picked)]
    before = sum(1 for k in range(at) if k not in set(picked))
    del graph.node[:]
    graph.node.extend(keep[:before] + list(new_nodes) + keep[before:])
