"""One test of a produced model: run it on the system under test (and on the oracle's expected side
when that is another system), then judge it on the one verdict path (triage/judging.py). The outcome
is returned as a ``Tested``; the produced record is left as it was."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Dict, Optional

from nnfuzz.materialize.values import all_finite
from nnfuzz.triage.judging import judge_run
from nnfuzz.verdict import Verdict, judge

if TYPE_CHECKING:
    from nnfuzz.fuzz.campaign import Campaign
    from nnfuzz.fuzz.produce import Produced


@dataclasses.dataclass
class Tested:
    """A test's outcome. ``verdict`` None: the campaign's time bound cut it short."""

    verdict: Optional[Verdict]
    result: object = None                    # the system under test's RunResult
    side: str = "actual"                     # whose bug a failure is: "actual" or "expected" (the other system)
    expected: Optional[Dict] = None          # the expected side's outputs, when another system ran
    reference: object = None                 # the ReferenceData judged with (with the float64 twins once made)
    twin: Optional[dict] = None              # for an inconsistency: were the float64 twins available, and why not
    failed: Optional[str] = None             # oracle=metamorphic: which model failed ("original" | "rewrite")
    invalid_outcome: Optional[str] = None    # mgen.invalid: "rejected" | "accepted" | the bug's label


def run_on(c: "Campaign", sandbox, p: "Produced"):
    """Run ``p`` on ``sandbox``; None when the campaign's own time bound cut it short."""
    return run_bytes(c, sandbox, p.payload(sandbox.format_for(p)), p.oracle.input)


def run_bytes(c: "Campaign", sandbox, model_bytes: bytes, inputs):
    """Run a model's bytes on ``sandbox`` within the campaign's timeout; None when the campaign's own
    time bound cut it short (not tested, not a timeout). Its seconds go to the campaign's phases."""
    timeout = c.run_timeout()
    res = sandbox.run(model_bytes, inputs, timeout=timeout)
    if res.status == "timeout" and timeout < c.full_timeout():
        return None
    for k, v in res.seconds.items():
        c.add_seconds(k, v)
    return res


def expected_outputs(c: "Campaign", sandbox, p: "Produced"):
    """(outputs to compare with, None) or (None, a Tested-to-be verdict or "cut"), and the side a bug
    belongs to. Torch eager's outputs unless the oracle runs another system (on the expected-side sandbox
    of ``sandbox``'s lane); undefined stays undefined."""
    expected = c.expected_of(sandbox)
    if expected is None or p.oracle.output is None:
        return p.oracle.output, None, "actual"
    res = run_on(c, expected, p)
    if res is None:
        return None, "cut", "actual"
    if res.status != "ok":
        v = judge(res, None, c.expected_info.engine, c.tolerances)
        if not v.is_bug:
            return None, Verdict.unsupported(f"the expected side ({c.spec.expected}): {v.summary}", v.detail), "actual"
        return None, v, "expected"  # a bug of the expected side's system: saved under its name
    outs = res.outputs or {}
    if not all_finite(outs):
        return None, None, "actual"  # NaN/Inf on the expected side: undefined, nothing to compare
    return outs, None, "actual"


def test(c: "Campaign", sandbox, p: "Produced", reference=None) -> Tested:
    """Test ``p`` (``reference``: ReferenceData with twins from an earlier run of the same test)."""
    import time

    if p.invalid is not None or c.spec.kind == "metamorphic":
        from nnfuzz.fuzz.noref import test_invalid, test_rewrite

        return test_invalid(c, sandbox, p) if p.invalid is not None else test_rewrite(c, sandbox, p)

    res = run_on(c, sandbox, p)
    if res is None:
        return Tested(None)
    expected, why, side = (None, None, "actual") if res.status != "ok" else expected_outputs(c, sandbox, p)
    if why == "cut":
        return Tested(None, res)
    if why is not None:
        return Tested(why, res, side, reference=p.oracle)

    def twins():
        t0 = time.perf_counter()
        try:
            return p.twins()  # the float64 twins decide whether this disagreement is only noise
        finally:
            c.add_seconds("export", time.perf_counter() - t0)

    judged = judge_run(res, expected, c.info.engine, c.tolerances, reference or p.oracle, twins)
    other = expected if c.expected_info is not None else None
    return Tested(judged.verdict, res, side, other, judged.reference, judged.twin)
