"""The root cause of a crash whose error names an op downstream of the fault.

A system's error names the op where it gave up (OpenVINO's shape inference fails at a HardSigmoid whose
input already has the wrong shape, because a Resize before it computed one), or the node itself
(``Backend.error_nodes``: of several Pads, the one that failed). The graph up to that node, with every
value exposed, is run on the system; among the nodes that feed it, the first whose own output shape,
dtype or presence is wrong on the system's own inputs (triage/local_error.py), else the first wrong in its
values, is the root cause (method "prefix"): a consumer fails on what it was given. The crash is signed as
that node's inconsistency (dedup.node_fault), so one wrong node is one signature whichever consumer failed
on it. When the prefix runs clean, or fails itself, the crash stays as the system reports it.

An error that names a value the system's optimized graph reads while no node gives it any more
(``Backend.error_dropped``: ORT's "Node input 'v0' is not a graph input, ...") is a pass that removed that
value's producer and left a consumer: the root cause is the producer's op (method "dropped"; no run needed).
Several fusions say only this, and the op they removed tells them apart (kept 0001 a Softplus, kept 0019 a
Pad, the LayerNorm fusion a Div).
"""
from __future__ import annotations

import re
from typing import Callable, Optional

import numpy as np

from nnfuzz.gir import GraphIR

# A consumer fails on the shape or dtype of what it is given, or on its absence: a node that gives one of these
# explains the crash before a node that is only off in values (ovdj 0051: a float32 Add 1.25 ulps off came before
# the reduce whose rank the Conv after it failed on)
STRUCTURAL = ("shape", "dtype", "missing")


def named_instruction(gir: GraphIR, onnx_model, op: str) -> Optional[int]:
    """The index of the first instruction lowered to an ONNX node of type ``op`` (or of our op ``op``)."""
    from nnfuzz.triage.onnx_nodes import instruction_of

    for node in onnx_model.graph.node if onnx_model is not None else ():
        if node.op_type == op:
            k = instruction_of(gir, onnx_model, node)
            if k is not None:
                return k
    return next((k for k, inst in enumerate(gir.insts) if inst.op.name == op), None)


def instruction_named_in(text: str, gir: GraphIR, onnx_model) -> Optional[int]:
    """The instruction of the ONNX node an error names by a quoted node or output name (OpenVINO's "[CPU]
    Interpolate node with name 'v1' only supports ...": its nodes take their ONNX output's name), or None."""
    from nnfuzz.triage.onnx_nodes import instruction_of

    if onnx_model is None:
        return None
    quoted = set(re.findall(r"'([^'\s]+)'", text))
    for node in onnx_model.graph.node:
        if quoted & ({node.name} | set(node.output)):
            k = instruction_of(gir, onnx_model, node)
            if k is not None:
                return k
    return None


def instruction_of_node(name: str, gir: GraphIR, onnx_model) -> Optional[int]:
    """The instruction of the ONNX node named ``name`` (a system's error names it: rootcause.failing_node), or None."""
    from nnfuzz.triage.onnx_nodes import instruction_of

    node = next((n for n in onnx_model.graph.node if name and n.name == name), None) if onnx_model is not None else None
    return None if node is None else instruction_of(gir, onnx_model, node)


def prefix(gir: GraphIR, k: int) -> GraphIR:
    """The graph of the instructions that feed instruction ``k`` (its ancestors), every value an output (but a
    quantized-tensor one, DType.quant_only: its DequantizeLinear shows it):
    a node wrong elsewhere did not give ``k`` its inputs (item 7 of issue 26: a wrong OneHot dtype was
    charged with a Resize that never read it)."""
    feeds = gir.feeding(gir.insts[k].inputs)
    return gir.sub(feeds, [v for j in sorted(feeds) for v in gir.insts[j].outputs if not gir.vars[v].dtype.quant_only])


def crash_root_cause(gir: GraphIR, weights, inputs, onnx_model, failing_op: str,
                     run: Callable, export=True, widened=(), at: Optional[int] = None) -> Optional[dict]:
    """BugMeta.root_cause for a crash at ``failing_op`` (the op the system's error names), or at
    instruction ``at`` (the node it names), or None."""
    from nnfuzz.materialize.model import build_model
    from nnfuzz.triage.local_error import scan

    k = at if at is not None else named_instruction(gir, onnx_model, failing_op) if failing_op else None
    if not k:
        return None
    head = prefix(gir, k)
    if not head.insts:  # fed by the graph's inputs alone: nothing before it to blame
        return None
    w = {n: np.asarray(weights[n]) for n in head.weights}
    x = {n: np.asarray(inputs[n]) for n in head.inputs}
    model = build_model(head, 0, export=export, values=(w, x))
    got = run(model, x)
    if got is None:
        return None
    found = scan(head, w, x, got, widened, prefer=STRUCTURAL)
    if found.root is None:
        return None
    return {**found.root.name_by_model(head, getattr(model, "onnx", None)).to_meta("prefix"), "named": failing_op}


def dropped_root(text: str, system, gir: Optional[GraphIR], onnx_model) -> Optional[dict]:
    """BugMeta.root_cause of a crash whose error names a value that no node gives after the system's passes
    (see the module): its producer in the model, method "dropped"; None when the error names none, or the
    model has no node giving it."""
    from nnfuzz.triage.onnx_nodes import instruction_of
    from nnfuzz.triage.rootcause import dropped_value

    var = dropped_value(text, system)
    node = next((n for n in onnx_model.graph.node if var in n.output), None) if var else None
    if node is None:
        return None
    k = instruction_of(gir, onnx_model, node) if gir is not None else None
    return {"op": node.op_type, "system_op": node.op_type, "dtype": None, "index": k, "var": var, "kind": None,
            "method": "dropped", "note": f"the system's passes removed the {node.op_type} that gives {var}, and a "
                                         "node still reads it"}


def crash_root_of(meta, err_text: str, gir_text: Optional[str], weights, inputs, model_bytes: Optional[bytes],
                  run: Callable, widened=(), result: Optional[Callable] = None) -> Optional[dict]:
    """``crash_root_cause`` for a saved or about-to-be-saved crash (its BugMeta and error text); None for a
    folder without a graph, a model other than ONNX or Relax, or an error that names no op (a Relax model's:
    no value of the graph, ``Backend.error_nodes``). A crash known only by
    its signal is localized by triage/signal_crash.py instead, with ``result(model, inputs)`` (the
    RunResult, None when time is up; without it, not localized)."""
    import onnx

    from nnfuzz.triage.rootcause import failing_node, root_cause
    from nnfuzz.triage.signal_crash import signal_only, signal_root_of

    if signal_only(meta, err_text):
        return signal_root_of(meta, err_text, gir_text, weights, inputs, model_bytes, result) if result else None
    if gir_text is None or weights is None or not model_bytes or meta.symptom != "crash":
        return None
    if meta.format == "relax":  # its values are the graph's: a value named is fed to its first consumer
        gir = GraphIR.loads(gir_text)
        var = failing_node(err_text or str(meta.summary), meta.system)
        at = next((k for k, inst in enumerate(gir.insts) if var in inst.inputs), None) if var in gir.vars else None
        return None if at is None else crash_root_cause(gir, weights, inputs, None, gir.insts[at].op.name, run,
                                                        meta.export_spec(), widened, at)
    if meta.format != "onnx":
        return None
    op, _ = root_cause(str(meta.summary), err_text)  # (as dedup.signature reads it)
    model, gir = onnx.load_model_from_string(model_bytes), GraphIR.loads(gir_text)
    dropped = dropped_root(err_text or str(meta.summary), meta.system, gir, model)
    if dropped is not None:
        return dropped
    # the node the error names where it names one (of several Pads, the one that failed), else by the op
    at = instruction_of_node(failing_node(err_text or str(meta.summary), meta.system), gir, model)
    if at is None and not op:
        at = instruction_named_in(err_text or str(meta.summary), gir, model)
    if not op and at is None:
        return None
    named = op or gir.insts[at].op.name
    return crash_root_cause(gir, weights, inputs, model, named, run, meta.export_spec(), widened, at)
