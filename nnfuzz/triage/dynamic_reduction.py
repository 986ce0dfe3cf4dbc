"""Reducing a dynamic model's bug (meta.json ``dynamic``, docs/dynamic-shapes.md) with its shape family kept:
node deletion (triage/node_deletion.py) on the graph with its symbolic dims, every candidate written in its
dynamic form, compiled once and run at every recorded shape, judged as the campaign judged it
(oracles/dynamic.py) and localized at its shape (triage/dynamic_local.py).

A deleted node's outputs become graph inputs fed, at each shape, the value that shape's run gave them;
each of their axes takes the family's symbol whose sizes it has at every shape (none where its size is the
same at every shape). An axis whose sizes follow no single symbol (``s0 + 3``, ``s0 * s1``) cannot become an
input dim, so that node stays; a candidate left with no symbolic input dim is not tried (the bug was found
dynamic and stays dynamic). A bug whose label the static check gave (``dynamic.static`` ``passes``: only the
dynamic form fails; ``fails when inferred again``: only a repeated inference) holds for a candidate only
when the static model of the failing shape, checked the same way (triage/static_check.py), gives
that label again. Shapes and attributes are not shrunk: the family's sizes are the bug's.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional

import numpy as np

from nnfuzz.gir import GraphIR, ShapeFamily


@dataclasses.dataclass
class ShapesCandidate:
    gir: GraphIR                          # with its family; the vars have shape 0's sizes
    weights: Dict[str, np.ndarray]
    shapes: List[Dict[str, np.ndarray]]   # each shape's inputs, in the family's order

    @property
    def inputs(self) -> Dict[str, np.ndarray]:
        return self.shapes[0]


def start_of(bug, gir: GraphIR, weights) -> ShapesCandidate:
    """The reduction's first candidate: ``bug``'s graph with its recorded family and every shape's inputs."""
    family = ShapeFamily.from_json(bug.meta.dynamic)
    return ShapesCandidate(dataclasses.replace(gir, family=family), dict(weights),
                           [dict(s["input"]) for s in bug.oracle["shapes"]])


def deleter(start: ShapesCandidate):
    """``delete(candidate, k)`` for reduce_graph, with every value of ``start`` at each shape (computed once:
    deleting a node changes no remaining value)."""
    from nnfuzz.triage.node_deletion import Candidate, all_values

    values = [all_values(Candidate(start.gir.at(j), start.weights, x)) for j, x in enumerate(start.shapes)]

    def delete(c: ShapesCandidate, k: int) -> Optional[ShapesCandidate]:
        from nnfuzz.triage.node_deletion import delete_node

        fam = c.gir.family
        base = delete_node(Candidate(dataclasses.replace(c.gir, family=None), c.weights, c.shapes[0]), k, values[0])
        dims = {i: list(fam.dims[i]) for i in base.gir.inputs if i in fam.dims}
        for v in (v for v in base.gir.inputs if v not in c.gir.inputs):
            axes = _axes(fam, [values[j][v].shape for j in range(len(c.shapes))])
            if axes is None:
                return None
            dims[v] = axes
        used = sorted({s for axes in dims.values() for s in axes if s is not None})
        if not used:
            return None
        family = ShapeFamily({i: a for i, a in dims.items() if any(s is not None for s in a)},
                             [{s: a[s] for s in used} for a in fam.assignments])
        shapes = [{i: (x[i] if i in x else values[j][i]) for i in base.gir.inputs} for j, x in enumerate(c.shapes)]
        return ShapesCandidate(dataclasses.replace(base.gir, family=family), base.weights, shapes)
    return delete


def _axes(fam: ShapeFamily, shapes) -> Optional[list]:
    """Per axis of a value whose shape at each shape of ``fam`` is ``shapes``: None (the same size at every
    shape) or the symbol with those sizes; None overall when some axis follows no symbol."""
    axes = []
    for a in range(len(shapes[0])):
        sizes = [int(s[a]) for s in shapes]
        if len(set(sizes)) == 1:
            axes.append(None)
            continue
        sym = next((s for s in fam.symbols() if [int(x[s]) for x in fam.assignments] == sizes), None)
        if sym is None:
            return None
        axes.append(sym)
    return axes


class ShapesChecker:
    """Checker (triage/bug_reduction.py) for a dynamic bug's candidates: their signature, as the campaign
    signs a dynamic test's bug, and the files of the last one checked."""

    def __init__(self, sandbox, meta, tolerances):
        self.sandbox, self.meta, self.tol = sandbox, meta, tolerances
        self.fmt = meta.format
        self.export = meta.export_spec() if self.fmt == "onnx" else False
        self.last = ""
        self.model = self.verdict = self.bug_meta = None
        self._payload, self._oracle = None, None

    def signature(self, c: ShapesCandidate) -> Optional[str]:
        from nnfuzz.errors import InternalError, NNFuzzError
        from nnfuzz.materialize.model import build_model
        from nnfuzz.triage.dynamic_local import dynamic_payload, settle_shapes
        from nnfuzz.triage.judging import bug_signature, model_twins

        try:
            models = [build_model(c.gir.at(j), 0, export=self.export if j == 0 else False, values=(c.weights, x))
                      for j, x in enumerate(c.shapes)]
            payload = dynamic_payload(models[0], self.fmt, c.gir.family)
        except InternalError:
            raise
        except NNFuzzError as e:  # a candidate the exporter or the checks refuse: not this bug
            self.last = f"not buildable: {type(e).__name__}: {e}"
            return None
        if any(m.oracle.output is None for m in models):
            self.last = "a shape's reference is undefined (NaN/Inf)"
            return None
        res = self.sandbox.run(payload, [dict(x) for x in c.shapes])
        judged, k, shown, loc = settle_shapes(res, [m.oracle for m in models], self.sandbox.backend_info.engine,
                                              self.tol, lambda j: model_twins(models[j]), self._localize(c))
        self.last, self.verdict, self.model = judged.verdict.label, judged.verdict, models[0]
        if not judged.verdict.is_bug:
            return None
        self.bug_meta = self._meta(c, models, judged, k, res, shown, payload, loc)
        self._payload = payload
        every = [{"input": dict(x), "output": m.oracle.output} for x, m in zip(c.shapes, models)]
        self._oracle = dataclasses.replace(judged.reference, shapes=every).to_dict()
        return bug_signature(self.bug_meta, judged.verdict)

    def _localize(self, c):
        """``localize(k, outputs)`` for settle_shapes: candidate ``c``'s Localization at shape k."""
        from nnfuzz.triage.dynamic_local import localize_at, sandbox_shapes
        from nnfuzz.triage.repro import widened_of

        return lambda k, outputs: localize_at(c.gir, c.gir.family, k, c.weights, c.shapes, sandbox_shapes(self.sandbox),
                                              self.fmt, self.tol, self.export, outputs,
                                              widened_of(self.sandbox.backend_info.name))

    def _meta(self, c, models, judged, k, res, shown, payload, loc):
        from nnfuzz.triage.static_check import static_term
        from nnfuzz.triage.judging import replay_meta

        static = self.meta.dynamic.get("static")
        if static_term(static) is not None:  # a label the static check gave (only the dynamic form fails, or
            # only a repeated inference): a candidate must keep it
            static = self._static_at(c, models[k], k, payload)
        dyn = {**self.meta.dynamic, **c.gir.family.to_json(), "shape": k, "compiles": res.compiles,
               "shapes_run": len(res.shapes) if res.shapes is not None else k + 1, "static": static}
        return replay_meta(self.meta, judged, shown, (lambda: loc.to_meta()) if loc is not None else None) \
            .replace(dynamic=dyn)

    def _static_at(self, c: ShapesCandidate, model, k: int, payload: bytes) -> str:
        """The static model of shape ``k`` (``model``; ``payload``: the dynamic one) checked as oracles/dynamic.py
        checks it (static_check): "passes", "fails when inferred again (<verdict>)" or "fails (<verdict>)"."""
        from nnfuzz.materialize.dynamic import static_model
        from nnfuzz.triage.static_check import static_check
        from nnfuzz.triage.judging import judge_run

        static = static_model(model.gir, self.fmt, payload, model.weights)
        engine = self.sandbox.backend_info.engine
        return static_check(self.sandbox.run, static, c.shapes[k], k,
                            lambda r: judge_run(r, model.oracle.output, engine, self.tol, model.oracle).verdict)

    def payload(self, c, model) -> bytes:
        """The last candidate checked (``c``): its dynamic model, as the bug's folder holds it."""
        return self._payload

    def oracle_record(self) -> dict:
        """oracle.pkl of the last candidate checked: its failing shape's values, and every shape's."""
        return self._oracle

    def gir_text(self, c: ShapesCandidate, with_family: bool) -> str:
        """gir.json: the graph (shape 0's sizes), with its family where the bug's gir.json had one."""
        return (c.gir if with_family else dataclasses.replace(c.gir, family=None)).dumps()
