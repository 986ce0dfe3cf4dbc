"""Python source that rebuilds an ONNX model with ``onnx.helper`` calls, for reproduction scripts a
maintainer reads: nodes as ``make_node`` lines, small tensors as literal numpy arrays.

Tensors of more than ``LITERAL_MAX`` elements are embedded as base64 (``_b64array``), and models of
more than ``READABLE_NODES`` nodes are left to the caller's base64 form: a script is for reading only
when the model is small (reduced bugs are).
"""
from __future__ import annotations

import base64
from typing import List

import numpy as np
from onnx import AttributeProto, ModelProto, TensorProto, helper, numpy_helper

LITERAL_MAX = 64
READABLE_NODES = 20


def _dtype_expr(arr: np.ndarray) -> str:
    if arr.dtype.name == "bfloat16":
        return "ml_dtypes.bfloat16"
    return f"np.{arr.dtype.name}"


def array_expr(arr: np.ndarray) -> str:
    """A numpy expression evaluating to ``arr`` (same dtype and shape, bit-exact)."""
    arr = np.asarray(arr)
    if arr.size > LITERAL_MAX or arr.dtype.kind == "f" and not np.all(np.isfinite(arr)) or arr.dtype.name == "bfloat16":
        raw = base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode()
        return f"_b64array({raw!r}, {_dtype_expr(arr)}, {list(arr.shape)})"
    if arr.dtype.kind == "f":
        values = [float(x) for x in arr.astype(np.float64).ravel()]  # repr of a float64 round-trips exactly
    elif arr.dtype.kind == "b":
        values = [bool(x) for x in arr.ravel()]
    else:
        values = [int(x) for x in arr.ravel()]
    body = f"np.array({values!r}, dtype={_dtype_expr(arr)})"
    return body + (f".reshape({list(arr.shape)})" if arr.ndim != 1 else "")


def _tensor_expr(t: TensorProto) -> str:
    return f"numpy_helper.from_array({array_expr(numpy_helper.to_array(t))}, {t.name!r})"


def _attr_expr(a: AttributeProto) -> str:
    if a.type == AttributeProto.TENSOR:
        return _tensor_expr(a.t)
    if a.type == AttributeProto.GRAPH or a.type == AttributeProto.GRAPHS:
        raise ValueError("subgraph attributes are not written as helper calls")
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return repr(v.decode())
    if isinstance(v, list):
        return repr([x.decode() if isinstance(x, bytes) else x for x in v])
    return repr(v)


def _value_info(vi) -> str:
    tt = vi.type.tensor_type
    shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tt.shape.dim] \
        if tt.HasField("shape") else None
    return f"helper.make_tensor_value_info({vi.name!r}, TensorProto.{TensorProto.DataType.Name(tt.elem_type)}, {shape!r})"


def readable(model: ModelProto) -> bool:
    return len(model.graph.node) <= READABLE_NODES and not any(
        a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for n in model.graph.node for a in n.attribute)


def model_source(model: ModelProto) -> str:
    """Statements that define ``model`` (a ModelProto equal to ``model`` up to doc strings and names)."""
    g = model.graph
    lines: List[str] = ["nodes = ["]
    for n in g.node:
        attrs = "".join(f", {a.name}={_attr_expr(a)}" for a in n.attribute)
        extra = (f", name={n.name!r}" if n.name else "") + (f", domain={n.domain!r}" if n.domain else "")
        lines.append(f"    helper.make_node({n.op_type!r}, {list(n.input)!r}, {list(n.output)!r}{extra}{attrs}),")
    lines.append("]")
    lines.append("initializers = [")
    lines += [f"    {_tensor_expr(t)}," for t in g.initializer]
    lines.append("]")
    lines.append("graph = helper.make_graph(nodes, " + repr(g.name or "g") + ",")
    lines.append("    [" + ", ".join(_value_info(v) for v in g.input) + "],")
    lines.append("    [" + ", ".join(_value_info(v) for v in g.output) + "],")
    lines.append("    initializers)")
    opsets = ", ".join(f"helper.make_opsetid({o.domain!r}, {o.version})" for o in model.opset_import)
    lines.append(f"model = helper.make_model(graph, opset_imports=[{opsets}], ir_version={model.ir_version})")
    return "\n".join(lines)


B64ARRAY = '''
def _b64array(text, dtype, shape):
    return np.frombuffer(base64.b64decode(text), dtype=dtype).reshape(shape).copy()
'''


def arrays_source(name: str, arrays) -> str:
    """``name = {...}``: each array as a literal (or base64 when large)."""
    items = "".join(f"\n    {k!r}: {array_expr(np.asarray(v))}," for k, v in (arrays or {}).items())
    return f"{name} = {{{items}\n}}"
