"""Tests whose oracle needs no reference (docs/oracles.md): the metamorphic oracle (the model and its
rewritten twin on the same system) and disruptive mode (an invalid model the system must reject).
Both are judged on the verdict path's rules for them (triage/judging.py: judge_rewrite, judge_invalid)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from nnfuzz.fuzz.trial import Tested, run_bytes, run_on
from nnfuzz.materialize.model import ReferenceData
from nnfuzz.triage.judging import judge_invalid, judge_rewrite
from nnfuzz.verdict import Symptom

if TYPE_CHECKING:
    from nnfuzz.fuzz.campaign import Campaign
    from nnfuzz.fuzz.produce import Produced


def test_rewrite(c: "Campaign", sandbox, p: "Produced") -> Tested:
    """Run the model and its rewrite on ``sandbox``; the original's outputs are the expected ones."""
    res = run_on(c, sandbox, p)
    if res is None:
        return Tested(None)
    again = None
    if res.status == "ok":  # a failing original is judged alone
        again = run_bytes(c, sandbox, p.rewrite_bytes, p.oracle.input)
        if again is None:
            return Tested(None, res)
    aliases = p.rewrite.get("aliases", {})
    verdict, failed = judge_rewrite(res, again, c.info.engine, c.tolerances, aliases)
    expected = res.outputs if res.status == "ok" else None
    ref = ReferenceData(p.oracle.input, expected)
    if verdict.symptom is Symptom.inconsistency and p.oracle.output is not None:
        twins, _ = _twins(c, p)  # defined values: the float64 twin tells rounding noise from a bug
        if twins.output_f64 is not None:
            ref = ReferenceData(p.oracle.input, expected, twins.output_f64, twins.output_f64_jitter)
            verdict, failed = judge_rewrite(res, again, c.info.engine, c.tolerances, aliases,
                                            twins.output_f64, twins.output_f64_jitter)
    shown = again if failed in ("rewrite", "pair") or (failed is None and res.status == "ok") else res
    return Tested(verdict, shown, "actual", expected, ref, failed=failed)


def _twins(c: "Campaign", p: "Produced"):
    import time

    t0 = time.perf_counter()
    try:
        return p.twins()
    finally:
        c.counters.seconds["export"] += time.perf_counter() - t0


def test_invalid(c: "Campaign", sandbox, p: "Produced") -> Tested:
    """Run the invalid model; it must be rejected with an error."""
    import onnx

    res = run_on(c, sandbox, p)
    if res is None:
        return Tested(None)
    declared = onnx.load_model_from_string(p.model_bytes).graph.output
    verdict, outcome = judge_invalid(res, c.info.engine, declared, p.invalid)
    return Tested(verdict, res, "actual", None, ReferenceData(p.oracle.input, None), invalid_outcome=outcome)
