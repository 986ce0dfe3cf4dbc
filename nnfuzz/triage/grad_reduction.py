"""Reduction of a gradient test's bug (meta.json ``grad``, oracle=grad): each candidate graph is
differentiated afresh (its outputs and float values change as nodes go: materialize/torch/grad.py ``eager``
with the bug's seed), run forward and backward on the system and judged as the oracle judges it
(triage/grad_judging.py ``judge_grad``), so a ``backward`` signature holds only while the backward still
fails. A bug found against another system (xla-cpu's against tf-cpu, TF eager: meta.json
``oracle.expected``) is judged against that system's outputs and gradients for each candidate, as the
campaign judged it (oracles/grad.py), the float64 twins still torch's; a candidate the expected side
fails on, or computes NaN/Inf for, is not the bug. ``grad_signature`` is the reducer's Checker.signature
(triage/bug_reduction.py) for such a bug."""
from __future__ import annotations


def grad_signature(check, c):
    """The signature of candidate ``c`` on ``check``'s sandbox (None: no bug, or no defined gradient);
    fills ``check``'s last model, verdict, BugMeta and GradSpec as Checker.signature does."""
    from nnfuzz.errors import InternalError, NNFuzzError
    from nnfuzz.materialize.model import ReferenceData, build_model
    from nnfuzz.materialize.portable import pack
    from nnfuzz.materialize.torch.grad import UPSTREAM, eager, is_grad
    from nnfuzz.materialize.values import all_finite
    from nnfuzz.triage.grad_judging import grad_record, grad_twins, judge_grad
    from nnfuzz.triage.judging import bug_signature, local_judges, replay_meta, settle_locally
    from nnfuzz.triage.repro import outputs_on, widened_of

    inputs = {k: v for k, v in c.inputs.items() if not k.startswith(UPSTREAM)}
    seed = check.meta.seed or 0
    try:
        model = build_model(c.gir, 0, export=False, values=(c.weights, inputs))
    except InternalError:
        raise
    except NNFuzzError as e:
        check.last = f"not buildable: {type(e).__name__}: {e}"
        return None
    spec, upstream, expected = (None, {}, {}) if model.oracle.output is None else eager(c.gir, c.weights, inputs, seed)
    if spec is None or not all_finite(expected):
        check.last = "no defined gradient"
        return None
    ref = ReferenceData({**inputs, **upstream}, expected)
    check.spec = spec
    sandbox = check.sandbox
    payload = pack(c.gir.dumps(), c.weights, None, spec.to_json())
    res = sandbox.run(payload, ref.input)
    if res.status == "ok" and check.expected is not None:  # the expected side's outputs and gradients instead
        theirs = check.expected.run(payload, ref.input)
        if theirs.status != "ok" or not all_finite(theirs.outputs or {}):
            check.last = (f"the expected side ({check.expected.backend}) failed: {theirs.error}" if theirs.status != "ok"
                          else f"the expected side ({check.expected.backend}) computes NaN/Inf: undefined")
            return None
        ref = ReferenceData(ref.input, theirs.outputs)
    forward = {k: v for k, v in (res.outputs or {}).items() if not is_grad(k)}
    local = local_judges(c.gir, c.weights, inputs, outputs_on(sandbox, check.meta.format), check.tol,
                         check.export, forward, widened_of(sandbox.backend_info.name))
    judged, failed, loc, _ = judge_grad(
        res, ref, sandbox.backend_info.engine, check.tol,
        lambda: grad_twins(c.gir.dumps(), c.weights, ref, spec.to_json(), seed),
        lambda j, a, e: (*settle_locally(j, a, e, *local), False))
    model.oracle = judged.reference  # the reduced folder's oracle.pkl: upstream and gradients included
    check.last, check.model, check.verdict = judged.verdict.label, model, judged.verdict
    if not judged.verdict.is_bug:
        return None
    check.bug_meta = replay_meta(check.meta.replace(grad=grad_record(spec.to_json(), failed)), judged, res,
                                 (lambda: loc.to_meta()) if loc is not None else None)
    return bug_signature(check.bug_meta, judged.verdict)
