"""``oracle=reference`` (the default): the system's outputs must match the framework's eager run, torch
eager (computed with the model) or, for a system whose backend names another ``reference`` (the TF
systems: ``tf-cpu``), that backend's outputs on the lane's expected-side sandbox. The compare-with-
another-run oracles (nnfuzz/oracles/compare.py) test the same way with another expected side."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from nnfuzz.oracles.base import ORACLES, Oracle, Skip, Tested

if TYPE_CHECKING:
    from nnfuzz.fuzz.context import RunContext
    from nnfuzz.fuzz.produce import Produced


def backend_class_of(cfg):
    """The class of the campaign's backend (a registry name or its "module:Class" path)."""
    from nnfuzz.backends.registry import backend_class

    return backend_class(cfg.backend_path or cfg.backend)


class Reference(Oracle):
    name = "reference"

    @classmethod
    def configure(cls, cfg) -> Oracle:
        if cfg.cmp_with:  # cmp.with=X picks the cmp oracle (docs/oracles.md)
            return ORACLES["cmp"].configure(cfg)
        under = backend_class_of(cfg)
        judged_by = under.oracle_for(cfg.backend_options)
        if judged_by is not None:  # tflite-cpu quantize=int8: the int8 oracle (oracles/int8.py)
            return ORACLES[judged_by].configure(cfg)
        return cls(under.reference)

    def skip(self, p: "Produced") -> Optional[Skip]:
        if p.values_undefined:  # undefined behaviour: whatever the system does is right
            return Skip.undefined_values(p)
        return None

    def test(self, ctx: "RunContext", lane, p: "Produced", reference=None) -> Tested:
        from nnfuzz.fuzz import local
        from nnfuzz.fuzz.context import run_on, timed_twins
        from nnfuzz.triage.judging import judge_run

        res = run_on(ctx, lane.sandbox, p)
        if res is None:
            return Tested(None)
        outputs, why, side, theirs = (None, None, "actual", None) if res.status != "ok" else \
            expected_outputs(ctx, lane, p)
        if why == "cut":
            return Tested(None, res)
        if why is not None:
            return Tested(why, res, side, reference=p.reference, expected_result=theirs)
        judged = judge_run(res, outputs, ctx.info.engine, ctx.tolerances, reference or p.reference,
                           lambda: timed_twins(ctx, p))  # the float64 twins tell noise from a bug
        judged, loc, checked = local.settle(ctx, lane.sandbox, p, judged, res.outputs, outputs)  # each node's own error
        other = outputs if ctx.expected_info is not None else None
        return Tested(judged.verdict, res, side, other, judged.reference, judged.twin, expected_result=theirs,
                      localization=loc, checked=checked)

    def account(self, counters, p: "Produced", t: Tested) -> None:
        if t.localization is not None and t.localization.noise:
            counters.noise += 1
        counters.checked += t.checked


def expected_failed(ctx: "RunContext", res):
    """(None, "cut" or a Tested-to-be verdict, the side, ``res``) when the expected side's run ``res`` gave
    nothing to compare with (cut by the time bound, or failed), else None."""
    from nnfuzz.verdict import Verdict, judge

    if res is None:
        return None, "cut", "actual", None
    if res.status == "ok":
        return None
    v = judge(res, None, ctx.expected_info.engine, ctx.tolerances)
    if not v.is_bug:
        return (None, Verdict.unsupported(f"the expected side ({ctx.expected_system}): {v.summary}", v.detail),
                "actual", res)
    return None, v, "expected", res  # a bug of the expected side's system: saved under its name


def expected_outputs(ctx: "RunContext", lane, p: "Produced"):
    """(outputs to compare with, None) or (None, a Tested-to-be verdict or "cut"), the side a bug
    belongs to, and the expected side's RunResult (None: torch eager's outputs). Torch eager's outputs
    unless another system is the expected side (the lane's expected-side sandbox); undefined stays
    undefined."""
    from nnfuzz.fuzz.context import run_on
    from nnfuzz.materialize.values import all_finite

    if lane.expected_sandbox is None or p.reference.output is None:
        return p.reference.output, None, "actual", None
    res = run_on(ctx, lane.expected_sandbox, p)
    failed = expected_failed(ctx, res)
    if failed is not None:
        return failed
    outs = res.outputs or {}
    if not all_finite(outs):
        return None, None, "actual", res  # NaN/Inf on the expected side: undefined, nothing to compare
    return outs, None, "actual", res
