"""Judging a gradient test (oracle=grad, nnfuzz/oracles/grad.py) on the one verdict path: the campaign, ``nnfuzz
repro`` and the reducer (triage/grad_reduction.py) judge a forward-and-backward run with ``judge_grad``, against
torch eager's outputs and gradients, with the float64 twins of both (``grad_twins``)."""
from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

BACKWARD_NOTE = ("the forward outputs match torch eager and the gradients differ: a fault in the backward "
                 "graph (not localized node by node)")


def grad_record(spec: Dict, failed: Optional[str]) -> Dict:
    """meta.json's ``grad``: outputs and wrt (GradSpec), upstream (the oracle.pkl inputs holding the
    upstream gradients), and failed ("forward" | "backward": the part an inconsistency, crash or hang is
    in; None: a pass, or a crash before either part began or on a system that does not say)."""
    from nnfuzz.materialize.torch.grad import grad_name, upstream_name

    return {**spec, "upstream": [upstream_name(o) for o in spec["outputs"]],
            "gradients": [grad_name(w) for w in spec["wrt"]], "failed": failed}


def grad_twins(gir_text: str, weights, ref, spec: Dict, seed: int) -> Tuple[object, str]:
    """(``ref`` with the float64 twins of its outputs and gradients, why they are missing or "")."""
    from nnfuzz.gir import GraphIR
    from nnfuzz.materialize.model import ReferenceData
    from nnfuzz.materialize.torch.grad import GradSpec, twins

    try:
        shadow, jitter = twins(GraphIR.loads(gir_text), weights, ref.input, GradSpec.from_json(spec), ref.input, seed)
    except RuntimeError as e:  # an op whose lowering insists on its dtype: judged without the twin, and said so
        return ref, f"the float64 twin could not run: {type(e).__name__}: {str(e).strip()[:300]}"
    return ReferenceData(ref.input, ref.output, shadow, jitter), ""


def judge_grad(res, ref, engine: str, tolerances, twins: Optional[Callable] = None,
               settle: Optional[Callable] = None):
    """(Judged, failed: "forward" | "backward" | None, Localization or None, checked) for a gradient run
    ``res`` against ``ref`` (ReferenceData: outputs and ``grad:`` gradients); a failed run's part is the
    one it ended in (RunResult.part). The forward outputs are
    judged first and settled by ``settle(judged, actual, expected)`` (local.settle's result: each node's
    own error); when they match, the gradients, with gradient tolerances (materialize/torch/grad.py)."""
    from nnfuzz.materialize.torch.grad import is_grad, tolerances as grad_tolerances, with_own_error
    from nnfuzz.triage.judging import judge_run
    from nnfuzz.triage.localize import Localization
    from nnfuzz.verdict import Symptom

    expected = ref.output or {}
    forward = {k: v for k, v in expected.items() if not is_grad(k)}
    grads = {k: v for k, v in expected.items() if is_grad(k)}
    tol = grad_tolerances(tolerances, expected)
    judged = judge_run(res, forward, engine, tol, ref, twins)
    loc, checked = None, False
    if settle is not None and res.status == "ok":
        actual = {k: v for k, v in (res.outputs or {}).items() if not is_grad(k)}
        judged, loc, checked = settle(judged, actual, forward)
    if judged.verdict.symptom is Symptom.inconsistency:
        return judged, "forward", loc, checked
    if res.status != "ok":  # a crash, hang or error: in the part the run was in (Backend.entering)
        return judged, res.part if judged.verdict.is_bug else None, loc, checked
    if judged.verdict.is_bug:
        return judged, None, loc, checked
    back = judge_run(res, grads, engine, tol, judged.reference, twins)
    if back.verdict.symptom is Symptom.inconsistency and back.reference.output_f64 is not None:
        back = judge_run(res, grads, engine, with_own_error(tol, grads, back.reference.output_f64), back.reference)
    if back.verdict.symptom is not Symptom.inconsistency:
        return back, None, loc, checked
    return back, "backward", Localization(None, "system-under-test", BACKWARD_NOTE), checked
