"""Localization and blame for an inconsistency.

The graph is rebuilt with every intermediate value as an output and run on the system under test.

- The **root cause** is the first node whose own error, judged on the system's own inputs to it, passes
  its op's accuracy budget (nnfuzz/triage/local_error.py): meta.json's ``root_cause`` (method
  "local-error"). When every node is within its budget, the disagreement is rounding noise grown
  downstream (``Localization.noise``), not a bug.
- Exposing every value can change what a compiler computes (fusion across the cut is no longer
  possible): when the exposed run's outputs no longer show what the test's run showed, a wrong output
  shape or dtype is charged to the first node that gives it with the graph cut after it and nothing
  exposed (nnfuzz/triage/truncate.py, method "truncate"); other faults that rounding cannot explain to
  the node whose output, exposed alone, makes them vanish (nnfuzz/triage/fusion_cut.py, method "cut",
  kind "fused"); otherwise it falls back to the *first divergent node* below (method "first-divergence").
- The first divergent node: the first node whose output differs between the system and torch (the
  reference framework). At that node the numpy reference (nnfuzz/reference) decides who is wrong:
  it agrees with torch and not with the system -> ``system-under-test``; with the system and not with
  torch -> ``reference-framework``; within tolerance of both, or of neither -> ``undecided``; the numpy
  reference failed on the graph -> ``numpy-eval-failed``, with the error in ``localization_note`` (an
  InternalError propagates).
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, Mapping, Optional, Sequence

import numpy as np

from nnfuzz.errors import InternalError
from nnfuzz.gir import GraphIR
from nnfuzz.triage.local_error import LocalErrors, scan
from nnfuzz.verdict import DEFAULT_TOLERANCES, compare


@dataclasses.dataclass
class Localization:
    first_divergent_node: Optional[dict]   # {"index", "op", "var", "dtype"} or None
    blame: str
    note: str = ""
    root_cause: Optional[dict] = None      # BugMeta.root_cause
    noise: bool = False                    # every node within its budget: no bug

    def to_meta(self) -> dict:
        return {"first_divergent_node": self.first_divergent_node, "blame": self.blame,
                "localization_note": self.note, "root_cause": self.root_cause}


def expose_all(gir: GraphIR) -> GraphIR:
    """The same graph with every instruction's outputs as graph outputs (in program order), but for those of a
    quantized-tensor type (DType.quant_only: never a graph output; the DequantizeLinear reading it shows it)."""
    outs = [v for inst in gir.insts for v in inst.outputs if not gir.vars[v].dtype.quant_only]
    return dataclasses.replace(gir, outputs=outs)


def localize(gir: GraphIR, weights: Mapping[str, np.ndarray], inputs: Mapping[str, np.ndarray],
             run: Callable[[object, Dict[str, np.ndarray]], Optional[Dict[str, np.ndarray]]],
             tolerances: Optional[Mapping[str, tuple]] = None, export=True,
             original: Optional[Mapping[str, np.ndarray]] = None, widened: Sequence[str] = ()) -> Localization:
    """``run(model, inputs)`` runs a Model (materialize.model) on the system under test and returns its
    outputs by name (None if it failed). ``export``: the ExportSpec the bug's model was written with
    (every node keeps its spellings when all values are exposed). ``original``: the system's outputs in
    the test being localized (None: taken as shown again); ``widened``: the system's precision
    allowance (nnfuzz/triage/local_error.py)."""
    tol = dict(tolerances or DEFAULT_TOLERANCES)
    check = local_check(gir, weights, inputs, run, tol, export, original, widened)
    if check.got is None:
        return Localization(None, "undecided", check.note)
    first = _first_divergence(gir, weights, inputs, check, tol)
    if check.changed:
        from nnfuzz.triage.fusion_cut import cut_root, unexplained_by_rounding
        from nnfuzz.triage.truncate import first_wrong_shape, structural

        ref = check.model.oracle.output
        want = {o: ref[o] for o in gir.outputs}
        wrong = structural(original, want)  # a wrong shape: the first node that gives it, nothing exposed
        cut = first_wrong_shape(gir, weights, inputs, run, wrong, export) if wrong else None
        if cut is None and unexplained_by_rounding(gir, original, want, tol):
            cut = cut_root(gir, weights, inputs, run, tol, export)
        if cut is not None:
            return dataclasses.replace(first, root_cause=cut, blame="system-under-test",
                                       note=f"{check.note}; {cut['note']}")
    if check.local is not None and check.local.root is not None:  # its own error proves the system wrong there
        root = check.local.root
        return dataclasses.replace(first, root_cause=root.to_meta(), blame="system-under-test",
                                   note=f"{root.op} ({root.dtype}) is off on its own inputs: {root.kind}, {root.note}")
    # noise: the disagreement shows between the system and torch now, and grows from rounding alone (torch
    # alone wrong is a finding of its own; a recorded reference that a fresh torch run does not give back
    # is not the system's computation to judge, and stays as recorded)
    if check.noise and first.blame != "reference-framework" and first.first_divergent_node is not None:
        return dataclasses.replace(first, noise=True, note="every node is within its accuracy budget on the "
                                                            "system's own inputs: rounding noise grown downstream")
    node = first.first_divergent_node
    fallback = None if node is None else {**{k: node[k] for k in ("op", "dtype", "index", "var")},
                                          "op": str(node["op"]).split("(")[0], "kind": None,
                                          "method": "first-divergence",
                                          "note": check.note + ("; no single cut removes it: the first divergent "
                                                                "node stands in" if check.changed else "")}
    system_op = None if node is None else _system_op(gir, check.model, node["var"])
    if system_op:  # (its signature names the op as the system ran it: HardSigmoidAlphaBeta is a HardSigmoid)
        fallback["system_op"] = system_op
    return dataclasses.replace(first, root_cause=fallback, note=f"{first.note}; {check.note}".strip("; "))


def _system_op(gir, model, var: str):
    from nnfuzz.triage.onnx_nodes import single_op

    onnx_model = getattr(model, "onnx", None)
    return single_op(gir, onnx_model, var) if onnx_model is not None and var in gir.vars else None


@dataclasses.dataclass
class LocalCheck:
    """The exposed run and its nodes judged one by one (``local``: None when not judged, see ``note``)."""

    model: object = None
    got: Optional[Dict[str, np.ndarray]] = None
    local: Optional[LocalErrors] = None
    note: str = ""
    changed: bool = False  # exposing every value changed what the system computes

    @property
    def noise(self) -> bool:
        """Shown again, every node judged and within its budget: rounding noise grown downstream."""
        return self.local is not None and self.local.root is None and not self.local.skipped


def local_check(gir: GraphIR, weights, inputs, run, tolerances, export=True, original=None,
                widened: Sequence[str] = ()) -> LocalCheck:
    """Run the graph with every value exposed and judge each node on the system's own inputs."""
    from nnfuzz.materialize.model import build_model

    model = build_model(expose_all(gir), 0, export=export, values=(dict(weights), dict(inputs)))
    if model.oracle.output is None:
        return LocalCheck(model, None, None, "the reference is undefined (NaN/Inf)")
    got = run(model, dict(inputs))
    if got is None:
        return LocalCheck(model, None, None, "the system could not run the model with every value exposed")
    if original is not None:
        same = compare({k: np.asarray(v) for k, v in original.items()}, {k: got[k] for k in original if k in got},
                       tolerances)
        if same.is_bug:
            return LocalCheck(model, got, None, "exposing every value changed what the system computes "
                                                f"({same.summary})", changed=True)
    local = scan(gir, weights, inputs, got, widened)
    if local.root is not None:
        local.root.name_by_model(gir, getattr(model, "onnx", None))
    note = "; ".join(f"{v}: not judged ({why})" for v, why in list(local.skipped.items())[:3])
    return LocalCheck(model, got, local, note)


def _first_divergence(gir, weights, inputs, check: LocalCheck, tol) -> Localization:
    """The first node whose exposed output differs from torch's, and the numpy reference's blame there."""
    from nnfuzz.materialize.model import add_twins
    from nnfuzz.reference import evaluate

    model, got = check.model, check.got
    ref = model.oracle.output
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
    torch_ok = not compare({"x": numpy_val}, {"x": torch_val}, tol).is_bug
    system_ok = not compare({"x": numpy_val}, {"x": np.asarray(system_val)}, tol).is_bug
    if torch_ok and not system_ok:
        return "system-under-test", "the numpy reference agrees with torch"
    if system_ok and not torch_ok:
        return "reference-framework", "the numpy reference agrees with the system under test"
    if torch_ok:
        return "undecided", "the numpy reference is within tolerance of both"
    return "undecided", "the numpy reference agrees with neither"
