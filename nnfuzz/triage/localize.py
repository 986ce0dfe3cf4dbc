"""Localization and blame for an inconsistency.

The graph is rebuilt with every intermediate value as an output and run on the system under test;
torch gives the reference framework's intermediates and the numpy reference (nnfuzz/reference) a
third opinion. The first node whose output differs between the system and torch is the
*first divergent node*. At that node the numpy reference decides who is wrong:

- it agrees with torch and not with the system -> ``system-under-test``;
- it agrees with the system and not with torch  -> ``reference-framework``;
- it is within tolerance of both, or of neither -> ``undecided``;
- the numpy reference failed on the graph (an op without an eval, an eval that raised)
  -> ``numpy-eval-failed``, with the error in ``localization_note`` (a fault of nnfuzz's reference,
  recorded rather than hidden; an InternalError propagates).

Exposing every intermediate can change what a compiler does (fusion across the cut is no longer
possible); when the exposed model shows no divergence, the node is unknown and blame ``undecided``.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, Mapping, Optional

import numpy as np

from nnfuzz.errors import InternalError
from nnfuzz.gir import GraphIR


@dataclasses.dataclass
class Localization:
    first_divergent_node: Optional[dict]   # {"index", "op", "var", "dtype"} or None
    blame: str
    note: str = ""

    def to_meta(self) -> dict:
        return {"first_divergent_node": self.first_divergent_node, "blame": self.blame,
                "localization_note": self.note}


def expose_all(gir: GraphIR) -> GraphIR:
    """The same graph with every instruction's outputs as graph outputs (in program order)."""
    outs = [v for inst in gir.insts for v in inst.outputs]
    return dataclasses.replace(gir, outputs=outs)


def localize(gir: GraphIR, weights: Mapping[str, np.ndarray], inputs: Mapping[str, np.ndarray],
             run: Callable[[object, Dict[str, np.ndarray]], Optional[Dict[str, np.ndarray]]],
             tolerances: Optional[Mapping[str, tuple]] = None, export=True) -> Localization:
    """``run(model, inputs)`` runs a Model (materialize.model) on the system under test and returns its
    outputs by name (None if it failed). ``export``: the ExportSpec the bug's model was written with
    (every node keeps its spellings when all values are exposed)."""
    from nnfuzz.materialize.model import add_twins, build_model
    from nnfuzz.verdict import DEFAULT_TOLERANCES, compare
    from nnfuzz.reference import evaluate

    tol = dict(tolerances or DEFAULT_TOLERANCES)
    full = expose_all(gir)
    model = build_model(full, 0, export=export, values=(dict(weights), dict(inputs)))
    ref = model.oracle.output
    if ref is None:
        return Localization(None, "undecided", "the reference is undefined (NaN/Inf)")
    got = run(model, dict(inputs))
    if got is None:
        return Localization(None, "undecided", "the system could not run the model with every value exposed")
    add_twins(model)
    o = model.oracle
    try:
        numpy_vals = evaluate(gir, weights, inputs)
    except InternalError:
        raise
    except Exception as e:  # noqa: BLE001 - any eval fault is recorded as the blame below, with its error
        numpy_vals, why = None, f"the numpy reference failed: {type(e).__name__}: {str(e).strip()[:300]}"
    for k, inst in enumerate(gir.insts):
        for v in inst.outputs:
            if v not in got:
                continue
            verdict = compare({v: ref[v]}, {v: got[v]}, tol, _one(o.output_f64, v), _one(o.output_f64_jitter, v))
            if not verdict.is_bug:
                continue
            node = {"index": k, "op": repr(inst.op), "var": v, "dtype": gir.vars[v].dtype.value}
            if numpy_vals is None:
                return Localization(node, "numpy-eval-failed", why)
            return Localization(node, *_blame(numpy_vals[v], ref[v], got[v], tol))
    return Localization(None, "undecided", "no intermediate value differs once every value is exposed")


def _one(arrays, name):
    return None if arrays is None or name not in arrays else {name: arrays[name]}


def _blame(numpy_val, torch_val, system_val, tol) -> tuple:
    from nnfuzz.verdict import compare

    torch_ok = not compare({"x": numpy_val}, {"x": torch_val}, tol).is_bug
    system_ok = not compare({"x": numpy_val}, {"x": np.asarray(system_val)}, tol).is_bug
    if torch_ok and not system_ok:
        return "system-under-test", "the numpy reference agrees with torch"
    if system_ok and not torch_ok:
        return "reference-framework", "the numpy reference agrees with the system under test"
    if torch_ok:
        return "undecided", "the numpy reference is within tolerance of both"
    return "undecided", "the numpy reference agrees with neither"
