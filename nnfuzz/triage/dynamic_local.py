"""Localizing a dynamic model's inconsistency (docs/dynamic-shapes.md) as a static one is localized
(triage/localize.py), at the shape ``k`` it showed at: the graph with every value exposed is written in its
dynamic form (the ONNX model's inputs with ``dim_param``, or the GraphIR payload with the family), compiled
once and run at shapes 0..k in the family's order, as the test ran it (a fault that a later run of one
compiled model shows needs the runs before it); shape k's outputs, the system's own values at every node,
are judged node by node against each op's accuracy budget. The campaign (oracles/dynamic.py) and the
replay (triage/repro.py) both localize this way.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Optional

import numpy as np

from nnfuzz.gir import GraphIR, ShapeFamily


def dynamic_payload(model, fmt: str, family: ShapeFamily) -> bytes:
    """``model`` (a Model of one shape of ``family``'s graph, materialize.model) in its dynamic form."""
    from nnfuzz.materialize.portable import model_payload

    gir = dataclasses.replace(model.gir, family=family)
    if fmt == "onnx":
        from nnfuzz.materialize.dynamic import with_dim_params

        return with_dim_params(model.onnx, gir).SerializeToString()
    return model_payload(gir, model.weights, None, fmt, model.seed)


def shape_runner(run_shapes: Callable[[bytes, List[dict]], Optional[list]], fmt: str, family: ShapeFamily,
                 earlier: List[Dict[str, np.ndarray]]):
    """``run(model, inputs)`` for localize(): ``model`` in its dynamic form, compiled once by
    ``run_shapes(payload, [inputs of each shape])`` (every shape's outputs, or None when it failed) and run
    at the ``earlier`` shapes' inputs, then at ``inputs``; the last run's outputs."""
    def run(model, inputs):
        outs = run_shapes(dynamic_payload(model, fmt, family), [*earlier, dict(inputs)])
        return None if outs is None else outs[-1]
    return run


def localize_at(gir: GraphIR, family: ShapeFamily, k: int, weights, shape_inputs: List[dict], run_shapes, fmt: str,
                tolerances, export, original=None, widened=()):
    """The Localization (triage/judging.py ``localization``) of an inconsistency at shape ``k`` of
    ``family``; ``gir``: the graph (any shape of it), ``shape_inputs``: each shape's inputs, in order;
    ``original``: the system's outputs at shape k in the test."""
    from nnfuzz.triage.judging import localization

    at_k = dataclasses.replace(gir, family=family).at(k)
    run = shape_runner(run_shapes, fmt, family, [dict(x) for x in shape_inputs[:k]])
    return localization(at_k, weights, dict(shape_inputs[k]), run, tolerances, export if fmt == "onnx" else False,
                        original, widened)


def sandbox_shapes(sandbox, timeout=None, still=lambda: True):
    """``run_shapes`` on a sandbox: its RunResult.shapes, or None when the run failed (or ``still()`` says
    the time is up)."""
    def run_shapes(payload: bytes, inputs: List[dict]):
        if not still():
            return None
        res = sandbox.run(payload, inputs, timeout=timeout() if callable(timeout) else timeout)
        return res.shapes if res.status == "ok" else None
    return run_shapes


def settle_shapes(res, refs, engine: str, tolerances, twins=None, localize=None, expected=None):
    """(Judged, the shape it is at, that shape's RunResult, its Localization) of a dynamic model's run, as
    ``judge_shapes`` judges it, with each inconsistency localized (``localize(k, outputs)``: the Localization
    at shape k or None; ``localize`` None: not localized): a shape where every node is within its accuracy budget is rounding
    noise grown downstream, not a failure, as for a static test (judging.settle_locally), and the judging
    goes on from the next shape; every shape passing or noise is a pass (its Localization the last noise).
    ``expected``: each shape's expected outputs where they are another system's (judge_shapes)."""
    from nnfuzz.triage.judging import judge_shapes
    from nnfuzz.verdict import Outcome, Symptom, Verdict

    start, noise = 0, None
    while start < len(refs):
        sub = res if start == 0 else dataclasses.replace(res, shapes=res.shapes[start:])
        judged, k, shown = judge_shapes(sub, refs[start:], engine, tolerances,
                                        (lambda j, s=start: twins(j + s)) if twins else None,
                                        expected[start:] if expected is not None else None)
        if k is None:
            break
        k += start
        if judged.verdict.symptom is not Symptom.inconsistency or localize is None:
            return judged, k, shown, None
        loc = localize(k, shown.outputs)
        if loc is None or not loc.noise:
            return judged, k, shown, loc
        noise, start = (k, loc), k + 1
    if noise is not None:  # the rest passed: a pass, the disagreement at shape k rounding noise
        quiet = Verdict(Outcome.PASS, summary=f"noise at shape {noise[0]}: {noise[1].note}", errors=judged.verdict.errors)
        return dataclasses.replace(judged, verdict=quiet), None, shown, noise[1]
    return judged, None, shown, None
