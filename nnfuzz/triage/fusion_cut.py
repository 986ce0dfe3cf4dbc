"""The root cause of an inconsistency that exposing every value makes disappear.

A compiler that fuses nodes computes differently once their intermediate values are graph outputs (the
fusion across the cut is no longer possible). Local error cannot judge such a fault: the run with every
value exposed is right. What still tells where the fault lies is *which* cut makes it vanish. Each
intermediate value is exposed alone, beside the graph's outputs, in program order; the first one whose
exposure makes the outputs right again names the root cause: the node that produces it, of kind
``fused`` (method "cut"). One fusion fault then gives one signature, whatever the graph around it.

Only a fault that rounding cannot explain is searched for: a wrong shape or dtype, a missing output, or
wrong values of an output computed from integers and booleans alone. Fusion legitimately changes
float rounding, and a discontinuous op downstream (Ceil, a comparison, a cast to bool) turns that into a
large difference, which a cut would remove as well; such a fault keeps the first divergent node.

The search runs at most ``MAX_CUTS`` models (one compile each), only for a test whose full exposure
changed the result; a fault that no single cut removes, or that the system no longer shows, gives None.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Mapping, Optional

import numpy as np

from nnfuzz.gir import GraphIR
from nnfuzz.verdict import compare

MAX_CUTS = 16


def unexplained_by_rounding(gir: GraphIR, original: Mapping[str, np.ndarray], reference: Mapping[str, np.ndarray],
                            tolerances) -> bool:
    """Whether the system's outputs differ from the reference's in shape, dtype or presence, or in the
    values of an output whose every ancestor value is an integer or boolean (see the module)."""
    from nnfuzz.triage.truncate import structural

    if structural(original, reference):
        return True
    return any(compare({name: want}, {name: original[name]}, tolerances).is_bug and _exact_path(gir, name)
               for name, want in reference.items())


def _exact_path(gir: GraphIR, var: str) -> bool:
    """Whether ``var`` and every value it is computed from are integers or booleans."""
    ancestors = {var} | {v for k in gir.feeding([var]) for v in gir.insts[k].inputs}
    return not any(gir.vars[v].dtype.is_float for v in ancestors)


def cut_root(gir: GraphIR, weights: Mapping[str, np.ndarray], inputs: Mapping[str, np.ndarray], run: Callable,
             tolerances, export=True) -> Optional[dict]:
    """BugMeta.root_cause for a fault that some single exposed value removes (see the module), else None."""
    from nnfuzz.materialize.model import build_model
    from nnfuzz.triage.onnx_nodes import single_op

    outputs = set(gir.outputs)
    inner = [(k, v) for k, inst in enumerate(gir.insts) for v in inst.outputs
             if v not in outputs and not gir.vars[v].dtype.quant_only]  # (never a graph output)
    for k, v in inner[:MAX_CUTS]:
        model = build_model(dataclasses.replace(gir, outputs=list(gir.outputs) + [v]), 0, export=export,
                            values=(dict(weights), dict(inputs)))
        ref = model.oracle.output
        if ref is None:  # the reference is undefined on this cut: nothing to judge
            continue
        got = run(model, dict(inputs))
        if got is None:
            continue
        fixed = compare({o: ref[o] for o in gir.outputs}, {o: got[o] for o in gir.outputs if o in got}, tolerances)
        if fixed.is_bug:
            continue
        inst = gir.insts[k]
        system_op = single_op(gir, getattr(model, "onnx", None), v)
        return {"op": inst.op.name, "dtype": gir.vars[v].dtype.value, "kind": "fused", "index": k, "var": v,
                "method": "cut", **({"system_op": system_op} if system_op else {}),
                "note": f"exposing {v} ({inst.op.name}'s output) alone makes the outputs right"}
    return None
