"""Disruptive mode (``mgen.invalid=P``): a valid ONNX model made to break exactly one rule of one
node, so that the system's handling of bad input is tested: it must reject the model with an error.

Rules (``RULES``), each a way to break one node:
- ``dtype``: an input cast to an element type the node's schema does not accept for it;
- ``rank``: an input given one more dimension (Unsqueeze at axis 0);
- ``shape``: an input's first dimension doubled (Concat of it with itself);
- ``attribute``: an axis-like attribute set out of range (axis 99, axes/perm [99]);
- ``missing-input``: the node's last required input left out.

A candidate counts only if ONNX itself says the model is invalid *because of that node*: the full
checker (with strict shape inference) rejects it and names the node, for another reason than a value
that disagrees with its declared shape. A change the checker accepts
(adding a leading dimension to an input of a broadcasting op is valid) is not a violation, and one the
checker blames on another node broke more than one rule; both are dropped and another is drawn.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, checker, defs, helper, numpy_helper

from nnfuzz.materialize.onnx.rewrite.graphs import value_types

TRIES = 24
# the checker's words for a value that only disagrees with the type the model declares for it
DECLARED_ONLY = ("existing shape", "merge shape", "Can't merge", "existing type")
# element types a broken input may be cast to (numeric and bool: every system can be fed them)
CANDIDATE_TYPES = {TensorProto.FLOAT: "float", TensorProto.DOUBLE: "double", TensorProto.INT32: "int32",
                   TensorProto.INT64: "int64", TensorProto.BOOL: "bool", TensorProto.UINT8: "uint8",
                   TensorProto.FLOAT16: "float16", TensorProto.INT8: "int8"}


class NoViolation(Exception):
    """No candidate of any rule made this model invalid in exactly one node."""


def _schema(model: ModelProto, node: NodeProto):
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    try:
        return defs.get_schema(node.op_type, opset, node.domain)
    except defs.SchemaError:
        return None


def _fresh(model: ModelProto, hint: str) -> str:
    names = {x for n in model.graph.node for x in n.output} | {i.name for i in model.graph.initializer}
    k = 0
    while f"_invalid_{hint}{k}" in names:
        k += 1
    return f"_invalid_{hint}{k}"


def _insert_before(model: ModelProto, node_index: int, new: List[NodeProto]) -> None:
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(nodes[:node_index] + new + nodes[node_index:])


def _feed(model: ModelProto, k: int, slot: int, make: Callable[[str, str], List[NodeProto]]) -> None:
    """Replace input ``slot`` of node ``k`` by the output of the nodes ``make(x, out)`` writes."""
    node = model.graph.node[k]
    out = _fresh(model, "x")
    new = make(node.input[slot], out)
    node.input[slot] = out
    _insert_before(model, k, new)


def _dtype(model, k, rng, types) -> Optional[str]:
    node = model.graph.node[k]
    schema = _schema(model, node)
    slots = [s for s, x in enumerate(node.input) if x and x in types]
    if schema is None or not slots:
        return None
    slot = slots[int(rng.integers(len(slots)))]
    formal = schema.inputs[min(slot, len(schema.inputs) - 1)]
    allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
    ok = allowed.get(formal.type_str, {formal.type_str})
    bad = [t for t, name in CANDIDATE_TYPES.items() if f"tensor({name})" not in ok]
    if not bad:
        return None
    to = bad[int(rng.integers(len(bad)))]
    _feed(model, k, slot, lambda x, out: [helper.make_node("Cast", [x], [out], name=f"{out}_cast", to=to)])
    return f"input {slot} cast to {CANDIDATE_TYPES[to]} (the schema takes {sorted(ok)})"


def _rank(model, k, rng, types) -> Optional[str]:
    node = model.graph.node[k]
    slots = [s for s, x in enumerate(node.input) if x]
    if not slots:
        return None
    slot = slots[int(rng.integers(len(slots)))]
    axes = _fresh(model, "axes")
    model.graph.initializer.append(numpy_helper.from_array(np.array([0], dtype=np.int64), axes))
    _feed(model, k, slot, lambda x, out: [helper.make_node("Unsqueeze", [x, axes], [out], name=f"{out}_unsq")])
    return f"input {slot} given an extra leading dimension"


def _shape(model, k, rng, types) -> Optional[str]:
    node = model.graph.node[k]
    slots = [s for s, x in enumerate(node.input) if x and x in types and len(types[x].tensor_type.shape.dim) >= 1]
    if not slots:
        return None
    slot = slots[int(rng.integers(len(slots)))]
    _feed(model, k, slot, lambda x, out: [helper.make_node("Concat", [x, x], [out], name=f"{out}_cat", axis=0)])
    return f"input {slot} with its first dimension doubled"


def _attribute(model, k, rng, types) -> Optional[str]:
    node = model.graph.node[k]
    schema = _schema(model, node)
    names = [a for a in ("axis", "axes", "perm", "blocksize", "keepdims") if schema is not None and a in schema.attributes]
    if not names:
        return None
    name = names[int(rng.integers(len(names)))]
    value = {"axis": 99, "axes": [99], "perm": [99], "blocksize": -2, "keepdims": 7}[name]
    kept = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(kept + [helper.make_attribute(name, value)])
    return f"attribute {name}={value}"


def _missing_input(model, k, rng, types) -> Optional[str]:
    node = model.graph.node[k]
    schema = _schema(model, node)
    if schema is None or not node.input or schema.min_input < 1:
        return None
    last = min(len(node.input), schema.min_input) - 1
    if last < 0 or not node.input[last]:
        return None
    dropped = node.input[last]
    node.input[last] = ""
    while node.input and node.input[-1] == "":
        del node.input[-1]
    return f"required input {last} ({dropped}) left out"


RULES: Dict[str, Callable] = {"dtype": _dtype, "rank": _rank, "shape": _shape, "attribute": _attribute,
                              "missing-input": _missing_input}


def make_invalid(model: ModelProto, seed: int) -> Tuple[ModelProto, dict]:
    """(a copy of ``model`` breaking exactly one rule of one node, its record for meta.json:
    rule, op, node, what was changed and the checker's message). NoViolation if none was found."""
    rng = np.random.default_rng([seed & 0xFFFFFFFF, 51])
    types = value_types(model)
    nodes = [k for k, n in enumerate(model.graph.node) if n.op_type != "Constant"]
    if not nodes:
        raise NoViolation("the model has no node to break")
    tried = []
    for _ in range(TRIES):
        rule = list(RULES)[int(rng.integers(len(RULES)))]
        k = nodes[int(rng.integers(len(nodes)))]
        out = ModelProto()
        out.CopyFrom(model)
        node = out.graph.node[k]
        name = node.name or f"{node.op_type}_{k}"
        node.name = name
        what = RULES[rule](out, k, rng, types)
        if what is None:
            continue
        why = _rejection(out)
        tried.append(f"{rule} on {name}: {'accepted' if why is None else 'blamed elsewhere'}")
        if why is not None and name in why:
            return out, {"rule": rule, "op": node.op_type, "node": name, "change": what, "checker": why[:400]}
    raise NoViolation(f"no single-node violation found in {TRIES} draws ({'; '.join(tried[-4:])})")


def _rejection(model: ModelProto) -> Optional[str]:
    """The full checker's message for ``model``, or None when it accepts it or only finds a value that
    disagrees with its declared type (a broadcast to a higher rank breaks no rule of the node itself)."""
    try:
        checker.check_model(model, full_check=True)
    except Exception as e:  # noqa: BLE001 - ValidationError / InferenceError / SchemaError: all say "invalid"
        text = f"{type(e).__name__}: {str(e).strip()}"
        return None if any(m in text for m in DECLARED_ONLY) else text
    return None
