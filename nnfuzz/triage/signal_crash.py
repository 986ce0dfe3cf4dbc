"""A crash known only by its signal: what tells its fault from another one's.

A native fault kills the sandbox worker with no message ("killed by SIGSEGV"): signed by the signal alone,
every SIGSEGV of one system at one stage would be one root cause (kept bugs/kept/0068, 0074 and 0091 are
three OpenVINO faults that were one signature). Two things the crash leaves tell them apart, and both are
the same on every run of one fault:

- the crashing thread's Python stack, which the worker's faulthandler writes into err.log ("Current thread
  0x... (most recent call first):"): the system's own frames on top (OpenVINO's ``read_model``, converting
  the model, or ``compile_model``) and, for a system that runs the graph op by op (TensorFlow eager), the
  op lowering of nnfuzz the system was called from (``ops/linear/tf.py _matmul``: the op it died in);
- where the stack names no op lowering: the op the crash localizes to (meta.json ``root_cause``, method
  ``signal``): in graph order, the first instruction whose own graph (it and the instructions that feed
  it, its outputs the only outputs, so it fuses with them as in the test) dies the same way on the system
  (stage, signal, the system's frames). OpenVINO's GroupNormalization -> Div crash localizes to the Div,
  its Concat -> QuantizeLinear -> DequantizeLinear -> QuantizeLinear crash to the last QuantizeLinear.

A crash whose own graph shows it nowhere (it needs two branches) keeps its stack alone. The localized op is
the last one the crash needs, so a fault that several consumers set off is one signature per consumer op
(the GroupNormalization crash of tests/cases/dedup's c7 0080 and 0089 came with a Div and with a Where): a
split, where the signal alone merged different faults. A flaky crash (heap corruption: another signal, or
none, from run to run) is signed by the run that was saved.
"""
from __future__ import annotations

import re
from pathlib import PurePath
from typing import Callable, List, Optional

import numpy as np

from nnfuzz.gir import GraphIR

_DUMP = re.compile(r"^Current thread 0x[0-9a-fA-F]+ .*\(most recent call first\):\s*$", re.M)
_FRAME = re.compile(r'^\s+File "([^"]+)", line \d+ in (\S+)\s*$')
_OWN = re.compile(r"[/\\]nnfuzz[/\\](.+)\.py$")
_LOWERING = re.compile(r"^ops[/\\](\w+)[/\\]\w+$")   # nnfuzz/ops/<family>/<framework>.py
TOP = 3                                              # the system's frames a signature names


def signal_only(meta, err_log: str) -> bool:
    """Whether ``meta`` is a crash that says nothing but the signal that killed the worker."""
    from nnfuzz.triage.rootcause import root_cause

    if meta.symptom != "crash" or not meta.signal:
        return False
    op, message = root_cause(str(meta.summary), err_log)
    return not op and (message or "").strip().startswith("killed by")


def stack_terms(err_log: str) -> List[str]:
    """The crashing thread's frames as a signature names them: the system's top frames (``module.function``,
    at most TOP, above nnfuzz's own frames) and the op lowering of nnfuzz under them (``op linear._matmul``),
    if the stack passes through one. [] for an err.log without a faulthandler dump."""
    m = _DUMP.search(err_log)
    if m is None:
        return []
    theirs: List[str] = []
    for line in err_log[m.end():].lstrip("\n").splitlines():
        frame = _FRAME.match(line)
        if frame is None:
            break
        path, func = frame.groups()
        own = _OWN.search(path)
        if own is None:
            if len(theirs) < TOP:
                theirs.append(f"{PurePath(path).stem}.{func}")
            continue
        lowering = _LOWERING.match(own.group(1))
        return theirs + ([f"op {lowering.group(1)}.{func}"] if lowering else [])
    return theirs


def names_op(terms: List[str]) -> bool:
    """Whether the stack already names the op the crash is in (an op lowering's frame)."""
    return any(t.startswith("op ") for t in terms)


def own_graph(gir: GraphIR, k: int) -> Optional[GraphIR]:
    """Instruction ``k`` with the instructions that feed it, its outputs the graph's only outputs (a
    quantized-tensor output, DType.quant_only, is no output: None when it has no other)."""
    outputs = [v for v in gir.insts[k].outputs if not gir.vars[v].dtype.quant_only]
    if not outputs:
        return None
    return gir.sub(gir.feeding(gir.insts[k].inputs) | {k}, outputs)


def localize(gir: GraphIR, weights, inputs, onnx_model, stage: str, signal: int, terms: List[str],
             result: Callable, export=True) -> Optional[dict]:
    """BugMeta.root_cause of a crash known by its signal: the first instruction whose own graph dies the
    same way (``stage``, ``signal``, the system's frames ``terms``) when ``result(model, inputs)`` (a
    RunResult, None when time is up) runs it; None when none does or time ran out."""
    from nnfuzz.errors import InternalError, NNFuzzError
    from nnfuzz.materialize.model import build_model
    from nnfuzz.triage.onnx_nodes import single_op

    for k, inst in enumerate(gir.insts):
        head = own_graph(gir, k)
        if head is None:
            continue
        w = {n: np.asarray(weights[n]) for n in head.weights}
        x = {n: np.asarray(inputs[n]) for n in head.inputs}
        try:
            model = build_model(head, 0, export=export, values=(w, x))
        except InternalError:
            raise
        except NNFuzzError:  # an own graph the exporter or its checks refuse is not run (as reduction's candidates)
            continue
        r = result(model, x)
        if r is None:
            return None
        if r.status == "crash" and r.signal == signal and r.stage == stage and stack_terms(r.detail) == terms:
            var = head.outputs[0]
            system_op = single_op(gir, onnx_model, var)
            return {"op": inst.op.name, "dtype": gir.vars[var].dtype.value, "kind": "crash", "index": k,
                    "var": var, "method": "signal", **({"system_op": system_op} if system_op else {})}
    return None


def signal_root_of(meta, err_text: str, gir_text: Optional[str], weights, inputs, model_bytes: Optional[bytes],
                   result: Callable) -> Optional[dict]:
    """``localize`` for a saved or about-to-be-saved crash; None for one that says more than its signal, a
    folder without a graph or weights, or a stack that already names the op."""
    if gir_text is None or weights is None or not signal_only(meta, err_text):
        return None
    terms = stack_terms(err_text)
    if names_op(terms):
        return None
    onnx_model = None
    if meta.format == "onnx" and model_bytes:
        import onnx

        onnx_model = onnx.load_model_from_string(model_bytes)
    return localize(GraphIR.loads(gir_text), weights, inputs, onnx_model, str(meta.stage), int(meta.signal), terms,
                    result, meta.export_spec() if meta.format == "onnx" else False)
