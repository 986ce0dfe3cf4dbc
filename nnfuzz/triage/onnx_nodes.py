"""Where a GraphIR instruction is in the ONNX model written for it: the exporter names each instruction's
output after its var and the nodes in between after temporaries (``_slic8``), so a node belongs to the
instruction whose var its outputs reach first."""
from __future__ import annotations

from typing import Optional


def instruction_of(gir, onnx_model, node) -> Optional[int]:
    """The index of the instruction whose lowering holds ``node``: follow its outputs through temporaries
    to the first GraphIR var."""
    made = {v: k for k, inst in enumerate(gir.insts) for v in inst.outputs}
    consumers = {}
    for n in onnx_model.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    todo, seen = list(node.output), set()
    while todo:
        name = todo.pop(0)
        if name in made:
            return made[name]
        if name in seen:
            continue
        seen.add(name)
        todo.extend(o for c in consumers.get(name, ()) for o in c.output)
    return None


# Nodes that only reshape what one other node computed (a LogSumExp with keepdims=0 may be spelled
# ReduceLogSumExp(keepdims=1) then Squeeze): the computing node names the instruction
_RESHAPING = frozenset({"Squeeze", "Unsqueeze", "Reshape", "Identity"})


def single_op(gir, onnx_model, var: str) -> Optional[str]:
    """The type of the one ONNX node that computes ``var`` from GraphIR vars (nnfuzz's Softshrink written as
    one Shrink), seen through nodes that only reshape its output (Squeeze, ...); its other inputs may be
    computed from constants and shapes alone (a Resize whose sizes are computed from Shape), or by nodes of
    its own type. None when the lowering takes nodes of several types that compute on values."""
    if onnx_model is None:
        return None
    graph = onnx_model.graph
    consts = {o for n in graph.node if n.op_type == "Constant" for o in n.output} | {t.name for t in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}

    def parameter(name: str, depth: int = 0) -> bool:  # from constants and shapes, not from any value
        if name in gir.vars:  # a graph value, even where the model holds it as an initializer (a weight)
            return False
        if not name or name in consts:
            return True
        node = producer.get(name)
        if node is None or depth > 32:
            return False
        return node.op_type in ("Shape", "Size") or all(parameter(i, depth + 1) for i in node.input)

    node = producer.get(var)
    while node is not None and node.op_type in _RESHAPING and node.input and node.input[0] not in gir.vars \
            and not parameter(node.input[0]) and all(parameter(i) for i in node.input[1:]):
        node = producer.get(node.input[0])
    def one_type(n, depth: int = 0) -> bool:  # its values come from vars, or from nodes of its own type
        return all(not i or i in gir.vars or parameter(i)
                   or (depth < 8 and producer.get(i) is not None and producer[i].op_type == node.op_type
                       and one_type(producer[i], depth + 1)) for i in n.input)

    # a chain of one type is that op too (nnfuzz's Relu6 written as Clip(Clip(x)): the Clip of bugs/kept/0061)
    return node.op_type if node is not None and one_type(node) else None
