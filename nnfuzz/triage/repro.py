"""Replaying a saved bug (``nnfuzz repro``) on the one verdict path (triage/judging.py): the recorded
inputs run on a system, the outputs are judged against the recorded reference (with its float64
twins), an inconsistency is localized again, and the replay's signature is compared with the recorded
one. A bug reproduces when both the symptom and the signature match; the same symptom with another
signature is another bug ("fails differently"). A metamorphic bug (meta.json ``rewrite``) replays the
pair, model.onnx then model_rewrite.onnx, judged against each other; an invalid model (``invalid``)
is judged on whether the system rejects it.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

REPRODUCED, NOT_REPRODUCED, OTHER_FAILURE = "reproduces", "does-not-reproduce", "fails-differently"


@dataclasses.dataclass
class Replay:
    outcome: str                       # REPRODUCED | NOT_REPRODUCED | OTHER_FAILURE
    verdict: object                    # verdict.Verdict of the replay
    recorded_signature: str
    signature: Optional[str]           # the replay's (None: no bug now)
    version: str = ""                  # of the system that replayed it
    meta: object = None                # the replay's BugMeta (its verdict and localization), when a bug

    def describe(self, recorded_symptom: str) -> str:
        v = self.verdict
        if self.outcome == REPRODUCED:
            return "reproduces"
        if self.outcome == NOT_REPRODUCED:
            return f"does not reproduce ({v.label})"
        return (f"fails differently ({v.label}, recorded {recorded_symptom}); signature now {self.signature!r}, "
                f"recorded {self.recorded_signature!r}")


def recorded_signature(bug) -> str:
    """The bug's signature as the current dedup rules compute it from its meta.json and err.log (a
    signature stored by an older nnfuzz may follow older rules)."""
    from nnfuzz.triage.bugstore import read_err_log
    from nnfuzz.triage.dedup import signature

    return signature(bug.meta, read_err_log(bug.path))


def replay(bug, sandbox, tolerances, same_system: bool = True, relocalize: bool = False) -> Replay:
    """Run ``bug`` on ``sandbox`` (started) and compare with what was recorded. ``same_system``: the
    sandbox runs the recorded system (else the signature names another system and only the symptom
    is compared). ``relocalize``: the replay's meta takes the localization found now even where the
    folder recorded none (``nnfuzz dedup --recheck``)."""
    from nnfuzz.materialize.model import ReferenceData
    from nnfuzz.triage.bugstore import bug_payload
    from nnfuzz.triage.judging import Judged, bug_signature, judge_run, replay_meta, settle_locally

    info = sandbox.backend_info
    o = bug.oracle
    ref = ReferenceData(o["input"], o["output"], o.get("output_f64"), o.get("output_f64_jitter"))
    loc, meta = None, bug.meta.replace(system=info.name)
    payload = bug_payload(bug, replay_format(bug, info))
    if bug.meta.dynamic is not None and o.get("shapes"):  # a dynamic model: one compile, every shape again
        judged, res, loc, static = _replay_shapes(bug, sandbox, payload, ref, tolerances)
        if static is not None:  # the static check made again: the label follows today's
            meta = meta.replace(dynamic={**bug.meta.dynamic, "static": static})
    elif bug.meta.rewrite is not None or bug.meta.invalid is not None:
        res = sandbox.run(payload, bug.oracle["input"])
        judged = Judged(_noref_verdict(bug, sandbox, res, tolerances), ref)
    elif (bug.meta.oracle or {}).get("kind") == "int8":  # tflite-cpu quantize=int8: in output steps
        from nnfuzz.oracles.int8 import judge_int8
        from nnfuzz.triage.bugstore import bug_weights

        res = sandbox.run(payload, bug.oracle["input"])
        judged = Judged(judge_int8(bug.gir_text, bug_weights(bug) or {}, bug.oracle["input"], res.outputs)[0]
                        if res.ok else judge_run(res, None, info.engine, tolerances, ref).verdict, ref)
    elif bug.meta.grad is not None:  # oracle=grad: the forward, then the gradients
        res = sandbox.run(payload, bug.oracle["input"])
        judged, loc, failed = _grad_judged(bug, sandbox, res, ref, tolerances)
        meta = meta.replace(grad={**bug.meta.grad, "failed": failed})
    else:
        res = sandbox.run(payload, bug.oracle["input"])
        judged = judge_run(res, ref.output, info.engine, tolerances, ref)
        local = _local(bug, sandbox, tolerances, res.outputs)
        if local is not None:  # each node's own error: noise, a root cause, a precision fault at its source
            judged, loc = settle_locally(judged, res.outputs, ref.output, *local)
    v, want = judged.verdict, recorded_signature(bug)
    if not v.is_bug:
        return Replay(NOT_REPRODUCED, v, want, None, info.version)
    # a folder saved without a divergent node or root cause (its localization was cut by the campaign's
    # time bound, or failed) is compared on the same footing: the replay keeps that record
    localized = (relocalize or bug.meta.first_divergent_node is not None or bug.meta.root_cause is not None) \
        and bug.meta.rewrite is None
    now = replay_meta(meta, judged, res,
                      (lambda: loc.to_meta()) if localized and loc is not None else None)
    # a folder saved before root causes (meta.json schema < 6) is compared on its own footing; `nnfuzz dedup
    # STORE --recheck` re-signs it with the root cause found now
    sig = bug_signature(now if bug.meta.root_cause is not None else now.replace(root_cause=None), v)
    same = v.label == bug.meta.symptom and (sig == want or not same_system)
    return Replay(REPRODUCED if same else OTHER_FAILURE, v, want, sig, info.version, now)


def _replay_shapes(bug, sandbox, payload, ref, tolerances):
    """(Judged, the RunResult of the shape judged, its Localization or None, meta.json ``dynamic.static`` now or
    None) for a dynamic model's bug (meta.json ``dynamic``): compiled once and run at every shape oracle.pkl
    holds, judged as the campaign judged it (oracles/dynamic.py); an inconsistency is localized at its shape
    (triage/dynamic_local.py) and, where the folder records a static check, that check is made again there."""
    from nnfuzz.materialize.model import ReferenceData
    from nnfuzz.triage.dynamic_local import settle_shapes

    refs = [ReferenceData(x["input"], x["output"]) for x in bug.oracle["shapes"]]
    at = bug.meta.dynamic.get("shape")
    if isinstance(at, int) and 0 <= at < len(refs):
        refs[at] = ref  # the recorded shape's reference, with its float64 twins
    res = sandbox.run(payload, [r.input for r in refs])
    local = None if bug.gir_text is None else (lambda k, outputs: _local_at(bug, sandbox, tolerances, k,
                                                                           [r.input for r in refs], outputs))
    judged, k, shown, loc = settle_shapes(res, refs, sandbox.backend_info.engine, tolerances, None, local)
    static = _static_check(bug, sandbox, payload, refs, k, tolerances) if judged.verdict.is_bug else None
    return judged, shown, loc, static


def _static_check(bug, sandbox, payload, refs, k, tolerances):
    """The static check of a dynamic bug's replay failing at shape ``k`` (triage/static_check.py), as a
    campaign makes it now; None where the folder records none (``oracle=static``: its own comparison) or
    lacks gir.json or a weight to write the static model of shape ``k`` from."""
    import dataclasses as dc

    from nnfuzz.gir import GraphIR, ShapeFamily
    from nnfuzz.materialize.dynamic import static_model
    from nnfuzz.triage.bugstore import bug_weights
    from nnfuzz.triage.static_check import static_check
    from nnfuzz.triage.judging import judge_run

    if not isinstance(bug.meta.dynamic.get("static"), str) or k is None or bug.gir_text is None:
        return None
    gir = dc.replace(GraphIR.loads(bug.gir_text), family=ShapeFamily.from_json(bug.meta.dynamic)).at(k)
    fmt = replay_format(bug, sandbox.backend_info)
    weights = {} if fmt == "onnx" else bug_weights(bug)  # (the ONNX model holds its own)
    if weights is None:
        return None
    static = static_model(gir, fmt, payload, weights, bug.meta.seed or 0)
    engine = sandbox.backend_info.engine
    return static_check(sandbox.run, static, refs[k].input, k,
                        lambda r: judge_run(r, refs[k].output, engine, tolerances, refs[k]).verdict)


def _local_at(bug, sandbox, tolerances, k: int, shape_inputs, original):
    """The Localization of a dynamic bug's inconsistency at shape ``k`` (None when its model lacks a weight of
    its graph)."""
    from nnfuzz.gir import GraphIR, ShapeFamily
    from nnfuzz.triage.bugstore import bug_weights
    from nnfuzz.triage.dynamic_local import localize_at, sandbox_shapes

    weights = bug_weights(bug)
    if weights is None:
        return None
    family = ShapeFamily.from_json(bug.meta.dynamic)
    fmt = replay_format(bug, sandbox.backend_info)
    return localize_at(GraphIR.loads(bug.gir_text), family, k, weights, shape_inputs, sandbox_shapes(sandbox), fmt,
                       tolerances, bug.meta.export_spec(), original, widened_of(sandbox.backend_info.name))


def _grad_judged(bug, sandbox, res, ref, tolerances):
    """(Judged, Localization or None, which part failed) of a gradient test's replay (oracles/grad.py)."""
    from nnfuzz.materialize.torch.grad import is_grad
    from nnfuzz.triage.grad_judging import grad_twins, judge_grad
    from nnfuzz.triage.bugstore import bug_weights
    from nnfuzz.triage.judging import settle_locally

    local = _local(bug, sandbox, tolerances, {k: v for k, v in (res.outputs or {}).items() if not is_grad(k)})
    settle = None if local is None else (lambda j, a, e: (*settle_locally(j, a, e, *local), False))
    twins = None if bug.gir_text is None else \
        (lambda: grad_twins(bug.gir_text, bug_weights(bug), ref, bug.meta.grad, bug.meta.seed or 0))
    judged, failed, loc, _ = judge_grad(res, ref, sandbox.backend_info.engine, tolerances, twins, settle)
    return judged, loc, failed


def _noref_verdict(bug, sandbox, res, tolerances):
    """The verdict of a replay whose oracle needs no reference: the metamorphic pair (the rewrite runs
    when the original ran) or the invalid model's handling."""
    from nnfuzz.triage.judging import judge_invalid, judge_rewrite

    engine = sandbox.backend_info.engine
    if bug.meta.invalid is not None:
        import onnx

        declared = onnx.load_model_from_string(bug.model_bytes).graph.output
        return judge_invalid(res, engine, declared, bug.meta.invalid)[0]
    again = sandbox.run(bug.rewrite_bytes, bug.oracle["input"]) if res.status == "ok" else None
    o = bug.oracle
    return judge_rewrite(res, again, engine, tolerances, bug.meta.rewrite.get("aliases", {}),
                         o.get("output_f64"), o.get("output_f64_jitter"))[0]


def replay_format(bug, info) -> str:
    """The format ``bug`` is replayed in: its own where the system takes it, else the system's."""
    return bug.format if bug.format in info.formats else info.format


def _local(bug, sandbox, tolerances, original):
    """(localize, check) callables for ``settle_locally`` on the replayed run (None when the folder has
    no gir.json or weights to rebuild the graph from)."""
    if bug.gir_text is None:
        return None
    from nnfuzz.gir import GraphIR
    from nnfuzz.triage.bugstore import bug_weights
    from nnfuzz.triage.judging import local_judges

    weights = bug_weights(bug)
    if weights is None:
        return None
    fmt = replay_format(bug, sandbox.backend_info)
    # the campaign exports only what the system runs as ONNX: an ONNX model beside a GraphIR run would name
    # the blamed node by its ONNX lowering (a Gelu of a weight is one Mul of constants there)
    return local_judges(GraphIR.loads(bug.gir_text), weights, dict(bug.oracle["input"]), outputs_on(sandbox, fmt),
                        tolerances, bug.meta.export_spec() if fmt == "onnx" else False, original,
                        widened_of(sandbox.backend_info.name))


def outputs_on(sandbox, fmt: str):
    """``run(model, inputs)`` for localization: a Model (materialize.model) on ``sandbox`` in format
    ``fmt``, its outputs by name (None if it failed)."""
    result = results_on(sandbox, fmt)

    def run(model, inputs):
        r = result(model, inputs)
        return r.outputs if r.status == "ok" else None
    return run


def results_on(sandbox, fmt: str):
    """``result(model, inputs)``: a Model's RunResult on ``sandbox`` in format ``fmt`` (how it ended, for
    a crash's localization: triage/signal_crash.py)."""
    return lambda model, inputs: sandbox.run_model(model, inputs, fmt=fmt)


def widened_of(system: str) -> tuple:
    """The dtypes ``system`` documents computing in wider precision (Backend.precision_allowance); none
    for a system this nnfuzz cannot name (a folder from a plug-in backend that is not installed)."""
    from nnfuzz.backends.registry import backend_class
    from nnfuzz.errors import ConfigError

    try:
        return tuple(backend_class(system).precision_allowance)
    except (ConfigError, ImportError):
        return ()
