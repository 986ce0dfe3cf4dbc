"""The ONNX nodes of a bug's blamed node, with their attributes, read from the folder's model.onnx.

gir.json names nnfuzz's op (``ResizeLinear(align_corners=False)``); what the system was given is the
ONNX the writer drew for it (``Resize(axes=[-1], mode='linear', ...)``), and a bug often lies there.
The blamed node is the root cause's var, else the first divergent node's, else (a crash) the node of
the ONNX op type the system's error names, else the graph's only node. Its ONNX nodes are the node that writes the
var and the helper nodes that feed only it (Constant, Shape, ...: outputs that are not graph vars).
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Tuple

SMALL = 8  # constant inputs with at most this many elements are shown with their values


def blamed_var(meta) -> Optional[str]:
    for rec in (meta.root_cause, meta.first_divergent_node):
        if isinstance(rec, dict) and rec.get("var") is not None:
            return str(rec["var"])
    return None


def blamed_onnx(folder: Path, meta, op: str, gir_vars) -> Tuple[Optional[str], List[str]]:
    """The blamed node's var (None if none is blamed or it is not a var of gir.json) and one line per
    ONNX node of it (``Resize_1: Resize(axes=[-1], ...)``, the node writing the var last); [] when the
    folder has no readable model.onnx or no node is blamed."""
    path = Path(folder) / "model.onnx"
    var = blamed_var(meta)
    if not path.is_file():
        return var, []
    import onnx
    from google.protobuf.message import DecodeError

    try:
        g = onnx.load_from_string(path.read_bytes()).graph
    except (DecodeError, ValueError, OSError):
        return var, []  # the graph drawing says why the model does not parse
    producer = {o: n for n in g.node for o in n.output}
    consts = _constants(g)
    if var is not None and var in producer:
        picked = _with_helpers(producer[var], producer, set(gir_vars or ()) | {i.name for i in g.input})
    else:
        ops = [n for n in g.node if n.op_type != "Constant"]
        picked = [n for n in ops if n.op_type == op] or (ops if len(ops) == 1 else [])
        outs = [o for n in picked for o in n.output if o in (gir_vars or ())]
        var = outs[0] if len(picked) == 1 and len(outs) == 1 else var  # the node the error names, as drawn
    shown = [n for n in picked if n.op_type != "Constant"] or picked  # a Constant's value is shown where it is read
    return var, [_line(n, consts) for n in shown]


def _with_helpers(node, producer: Dict[str, object], graph_vars) -> List[object]:
    out, todo, seen = [], [node], set()
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        todo += [producer[x] for x in n.input if x and x in producer and x not in graph_vars]
    return list(reversed(out))


def _constants(g) -> Dict[str, str]:
    """name -> its value as text, for small initializers and Constant nodes."""
    from onnx import numpy_helper

    out = {}
    tensors = [(t.name, t) for t in g.initializer]
    tensors += [(n.output[0], a.t) for n in g.node if n.op_type == "Constant" for a in n.attribute if a.name == "value"]
    for name, t in tensors:
        try:
            arr = numpy_helper.to_array(t)
        except Exception:  # noqa: BLE001 - an odd tensor: shown without its value
            continue
        if arr.size <= SMALL:
            import numpy as np

            out[name] = np.array2string(arr.reshape(-1), precision=4, separator=", ") if arr.ndim else str(arr.item())
    return out


def _line(n, consts: Dict[str, str]) -> str:
    from onnx import AttributeProto, helper

    attrs = []
    for a in n.attribute:
        if a.type in (AttributeProto.TENSOR, AttributeProto.GRAPH, AttributeProto.GRAPHS):
            continue
        v = helper.get_attribute_value(a)
        v = v.decode(errors="replace") if isinstance(v, bytes) else v
        attrs.append(f"{a.name}={v!r}" if isinstance(v, str) else f"{a.name}={v}")
    ins = [(f"{x}={consts[x]}" if x in consts else x) if x else "''" for x in n.input]
    label = f"{n.name}: " if n.name else ""
    value = f" = {consts[n.output[0]]}" if n.op_type == "Constant" and n.output and n.output[0] in consts else ""
    return f"{label}{n.op_type}({', '.join(attrs)}){value}" + (f"  inputs: {', '.join(ins)}" if ins else "")
