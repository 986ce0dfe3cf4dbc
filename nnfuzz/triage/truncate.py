"""The root cause of a wrong output shape (or dtype, or a missing output) that exposing every value hides.

A compiler's rewrite may give a node the wrong shape only where its input is made by another node that it
rewrites with it (bugs/kept/0066: OpenVINO moves a kernel-1 Conv's stride into the op before it and leaves
the padding out of the Conv's output length). Exposing that input makes the rewrite impossible, so the
fusion cut (fusion_cut.py) would name the producer, a BatchNormalization in one graph and a
DequantizeLinear in the next: one fault under a signature per producer. A shape is each node's own
output, though: the graph is cut after each node in turn, in program order, with only that node's
outputs as the graph's outputs (nothing else exposed, so every rewrite the node takes part in stays
possible), and the first whose output has the wrong shape or dtype, or is missing, is the root cause
(method "truncate", its kind the difference's: shape, dtype, missing).

A node that the system rewrites away only when it is not the graph's output (ONNX Runtime's
EliminateSlice, bugs/kept/0046) is then charged to the consumer that first shows the wrong shape.

At most ``MAX_RUNS`` models are run (one compile each), only the nodes that feed a wrong output.
"""
from __future__ import annotations

from typing import Callable, Iterable, List, Mapping, Optional

import numpy as np

from nnfuzz.gir import GraphIR

MAX_RUNS = 16


def structural(got: Mapping[str, np.ndarray], want: Mapping[str, np.ndarray]) -> List[str]:
    """The names of ``want``'s outputs that ``got`` lacks or gives in another shape or dtype."""
    return [name for name, w in want.items() if difference(got.get(name), w) is not None]


def difference(got, want) -> Optional[str]:
    """The kind of structural difference of one output from the reference's: missing, shape, dtype or None."""
    if got is None:
        return "missing"
    if np.shape(got) != np.shape(want):
        return "shape"
    return "dtype" if np.asarray(got).dtype != np.asarray(want).dtype else None


def truncated(gir: GraphIR, k: int) -> GraphIR:
    """The graph of instruction ``k`` and the instructions that feed it, with ``k``'s outputs (but a
    quantized-tensor one, DType.quant_only, which is never a graph output) as its only outputs."""
    keep = gir.feeding(gir.insts[k].inputs) | {k}
    return gir.sub(keep, [v for v in gir.insts[k].outputs if not gir.vars[v].dtype.quant_only])


def first_wrong_shape(gir: GraphIR, weights, inputs, run: Callable, wrong: Iterable[str], export=True) -> Optional[dict]:
    """BugMeta.root_cause: the first node feeding the ``wrong`` outputs whose output, with the graph cut
    after it, has the wrong shape or dtype or is missing (see the module); None when no cut shows it."""
    from nnfuzz.materialize.model import build_model
    from nnfuzz.triage.onnx_nodes import single_op

    feeds = gir.feeding(list(wrong))
    candidates = [k for k in sorted(feeds) if any(not gir.vars[v].dtype.quant_only for v in gir.insts[k].outputs)]
    for k in candidates[:MAX_RUNS]:
        head = truncated(gir, k)
        w = {n: np.asarray(weights[n]) for n in head.weights}
        x = {n: np.asarray(inputs[n]) for n in head.inputs}
        model = build_model(head, 0, export=export, values=(w, x))
        ref = model.oracle.output
        if ref is None:  # the reference is undefined here: nothing to judge
            continue
        got = run(model, x)
        if got is None:  # the system failed on it: no shape to read
            continue
        for v in head.outputs:
            kind = difference(got.get(v), ref[v])
            if kind is None:
                continue
            inst = gir.insts[k]
            system_op = single_op(head, getattr(model, "onnx", None), v)
            seen = "no output" if kind == "missing" else (f"{list(np.shape(got[v]))}" if kind == "shape"
                                                           else str(np.asarray(got[v]).dtype))
            want = list(np.shape(ref[v])) if kind != "dtype" else str(np.asarray(ref[v]).dtype)
            return {"op": inst.op.name, "dtype": gir.vars[v].dtype.value, "kind": kind, "index": k, "var": v,
                    "method": "truncate", **({"system_op": system_op} if system_op else {}),
                    "note": f"with the graph cut after it, {v} ({inst.op.name}'s output) is {seen}, the op gives {want}"}
    return None
