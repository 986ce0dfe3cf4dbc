"""A campaign's checks of each node's own error (triage/local_error.py), on the lane's sandbox and within
the campaign's time bound: the localization of an inconsistency, and the node-by-node check of a pass
further from the reference than rounding explains (triage/judging.py ``settle_locally``)."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Tuple

if TYPE_CHECKING:
    from nnfuzz.fuzz.context import RunContext
    from nnfuzz.fuzz.produce import Produced


def settle(ctx: "RunContext", sandbox, p: "Produced", judged, actual, expected):
    """``settle_locally`` for a produced model tested on ``sandbox`` (its graph and values): (the verdict,
    the Localization or None, whether a passing run was checked node by node). A migrated test (no
    graph) is left as judged."""
    from nnfuzz.triage.judging import settle_locally

    if p.gir_text is None:
        return judged, None, False
    t0, checked = time.perf_counter(), []

    def checking():
        checked.append(True)
        return _judges(ctx, sandbox, p, actual)[1]()
    try:
        with ctx.clock.judging():
            judged, loc = settle_locally(judged, actual, expected, lambda: localize(ctx, sandbox, p, actual), checking)
        return judged, loc, bool(checked)
    finally:
        ctx.add_seconds("triage", time.perf_counter() - t0)


def localize(ctx: "RunContext", sandbox, p: "Produced", original):
    with ctx.clock.judging():
        return _judges(ctx, sandbox, p, original)[0]()


def _judges(ctx: "RunContext", sandbox, p: "Produced", original):
    """(localize, check) on ``p``'s graph (parsed only when a test needs one of them)."""
    from nnfuzz.gir import GraphIR
    from nnfuzz.triage.judging import local_judges

    return local_judges(GraphIR.loads(p.gir_text), p.weights, p.reference.input, runner(ctx, sandbox, p),
                        ctx.tolerances, p.export, original, widened(ctx))


def runner(ctx: "RunContext", sandbox, p: "Produced"):
    """``run(model, inputs)`` for localization: the exposed model on ``sandbox`` as ``p`` was sent (None
    when it failed or the campaign's time is up)."""
    result = results(ctx, sandbox, p)

    def run(model, inputs):
        r = result(model, inputs)
        return r.outputs if r is not None and r.status == "ok" else None
    return run


def results(ctx: "RunContext", sandbox, p: "Produced"):
    """``result(model, inputs)``: a model's RunResult on ``sandbox`` as ``p`` was sent (None when the
    campaign's time is up, its grace included in a thread judging a bug): how a crash's own graph ends
    (triage/signal_crash.py)."""
    def result(model, inputs):
        if ctx.left() <= 0:
            return None
        return sandbox.run_model(model, inputs, timeout=ctx.run_timeout(), fmt=sandbox.format_for(p))
    return result


def widened(ctx: "RunContext") -> Tuple[str, ...]:
    """The dtypes the system under test documents computing in wider precision (Backend.precision_allowance)."""
    from nnfuzz.triage.repro import widened_of

    return widened_of(ctx.cfg.backend_path or ctx.cfg.backend)
