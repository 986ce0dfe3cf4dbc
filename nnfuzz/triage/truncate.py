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
EliminateSlice, bugs/kept/0046) first shows its wrong shape in the node that reads it. Where that node's
shape rule, applied to the shape of the removed node's own input, gives exactly the shape it gave, it read
its input as if that node were not there: the removed node is charged. (Otherwise one such fault came
under a signature per consumer: Exp, HardSigmoid, Transpose, Elu, ...; kept 0020, a Transpose after a
Slice that is wrong for another reason, keeps its consumer.)

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


def _skipped_before(gir: GraphIR, k: int, seen: List[int]) -> Optional[int]:
    """The instruction that makes node ``k``'s one input, where ``k``'s shape rule applied to that
    instruction's own input gives the dims ``seen`` that ``k`` gave: ``k`` read its input as if the
    instruction were not there (see the module); None otherwise."""
    from nnfuzz.abstract.tensor import AbsTensor
    from nnfuzz.errors import OpDefinitionError

    inst = gir.insts[k]
    made = {v: j for j, other in enumerate(gir.insts) for v in other.outputs}
    if len(inst.inputs) != 1 or inst.inputs[0] not in made:
        return None
    j = made[inst.inputs[0]]
    x, y = gir.vars[inst.inputs[0]], gir.vars[gir.insts[j].inputs[0]] if gir.insts[j].inputs else None
    if y is None or y.ndims != x.ndims or y.dtype != x.dtype or list(y.shape) == list(x.shape) \
            or not all(isinstance(d, int) for d in y.shape):
        return None  # (k's rule takes no input of another rank or dtype; an input of x's shape tells nothing)
    try:
        out = inst.op.checked_type_transfer([AbsTensor(list(y.shape), x.dtype)])
    except OpDefinitionError:  # k's rule refuses that shape: it cannot have read it
        return None
    return j if [int(d) for d in out[0].shape] == seen else None


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
            j = _skipped_before(gir, k, list(np.shape(got[v]))) if kind == "shape" else None
            if j is not None:
                x, made = inst.inputs[0], gir.insts[j]
                system_op = single_op(head, getattr(model, "onnx", None), x)
                return {"op": made.op.name, "dtype": gir.vars[x].dtype.value, "kind": kind, "index": j, "var": x,
                        "method": "truncate", **({"system_op": system_op} if system_op else {}),
                        "note": f"with the graph cut after {inst.op.name}, its output {v} is {seen} where {want} is "
                                f"right: what {inst.op.name} gives {made.op.name}'s input, as if the {made.op.name} were "
                                f"not there, though {x} ({made.op.name}'s output) is right as the graph's output"}
            return {"op": inst.op.name, "dtype": gir.vars[v].dtype.value, "kind": kind, "index": k, "var": v,
                    "method": "truncate", **({"system_op": system_op} if system_op else {}),
                    "note": f"with the graph cut after it, {v} ({inst.op.name}'s output) is {seen}, the op gives {want}"}
    return None
