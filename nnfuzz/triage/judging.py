"""The one verdict path, used by campaigns (fuzz/), ``nnfuzz repro`` and ``nnfuzz reduce``:

    judge the run (nnfuzz/verdict.py; a metamorphic pair by judge_rewrite, an invalid model by judge_invalid)
    -> on a disagreement, the float64 twins decide whether it is only noise (judged again with them)
    -> an inconsistency is localized (triage/localize.py) by each node's own error: none beyond its
       budget is noise; a pass further from the reference than rounding explains is checked the same way,
       and a node beyond its budget there is an inconsistency at its source (``settle_locally``)
    -> the bug's signature (triage/dedup.py) from its BugMeta and error text.

Each step returns its result; nothing is written into its inputs.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, Mapping, Optional, Tuple

from nnfuzz.errors import InternalError, NNFuzzError
from nnfuzz.verdict import Symptom, Verdict, judge


@dataclasses.dataclass
class Judged:
    """A run's verdict, the reference data it was judged with (with the float64 twins once computed)
    and, for an inconsistency, whether the twins were there: {"available": bool, "note": why not}."""

    verdict: Verdict
    reference: object                  # materialize.model.ReferenceData
    twin: Optional[dict] = None


def judge_run(res, expected, engine: str, tolerances: Mapping[str, tuple], reference,
              twins: Optional[Callable[[], Tuple[object, str]]] = None) -> Judged:
    """The verdict for ``res`` (a sandbox RunResult) against ``expected`` outputs (None: undefined).

    ``reference`` (ReferenceData) gives the float64 twins if it holds them; else, when the run
    disagrees, ``twins()`` returns (ReferenceData with the twins, a note saying why they are missing
    if they are) and the run is judged again with them."""
    def now(ref):
        return judge(res, expected, engine, tolerances, twin=ref.output_f64, jitter=ref.output_f64_jitter)

    verdict, note = now(reference), ""
    if verdict.symptom is Symptom.inconsistency and reference.output_f64 is None:
        if twins is None:
            note = "no float64 twin was recorded with the reference (oracle.pkl)"
        else:
            reference, note = twins()
            verdict = now(reference)
    twin = None
    if verdict.symptom is Symptom.inconsistency:
        twin = {"available": reference.output_f64 is not None,
                "note": "" if reference.output_f64 is not None else note}
    return Judged(verdict, reference, twin)


def judge_shapes(res, refs, engine: str, tolerances, twins=None, expected=None):
    """(Judged, the index of the shape it is at, that shape's RunResult) for a dynamic model's run ``res``
    (RunResult.shapes) against ``refs`` (each shape's ReferenceData): a failed run at the shape it ended
    at (a compile failure at shape 0), else the first shape judged a bug; every shape passing gives the
    last shape's Judged, shape None and ``res``. ``twins(k)``: shape k's float64 twins (judge_run).
    ``expected``: each shape's expected outputs where they are another system's (None: ``refs``' outputs)."""
    import dataclasses

    if res.status != "ok":
        k = res.shape or 0
        return judge_run(res, None, engine, tolerances, refs[k]), k, res
    judged = None
    for k, ref in enumerate(refs):
        one = dataclasses.replace(res, outputs=res.shapes[k])
        want = ref.output if expected is None else expected[k]
        judged = judge_run(one, want, engine, tolerances, ref, (lambda k=k: twins(k)) if twins else None)
        if judged.verdict.is_bug:
            return judged, k, one
    return judged, None, res


def model_twins(model) -> Tuple[object, str]:
    """(the model's ReferenceData with the float64 twins, why they are missing or "")."""
    from nnfuzz.materialize.model import add_twins

    add_twins(model)
    return model.oracle, model.twin_note or ""


def localization(gir, weights, inputs, run, tolerances, export, original=None, widened=()):
    """An inconsistency's Localization (triage/localize.py). One that cannot be done (the graph with every
    value exposed does not export, say) is recorded as blame "localization-failed" with the error; an
    InternalError (a bug in nnfuzz) propagates."""
    from nnfuzz.triage.localize import Localization, localize

    try:
        return localize(gir, weights, inputs, run, tolerances, export, original, widened)
    except InternalError:
        raise
    except NNFuzzError as e:
        return Localization(None, "localization-failed", f"localization failed: {type(e).__name__}: {e}")


def local_judges(gir, weights, inputs, run, tolerances, export, original=None, widened=()):
    """(localize, check) for ``settle_locally`` on one graph run by ``run``: the Localization of an
    inconsistency and the LocalCheck (triage/localize.py) of a pass, each with ``original``, the outputs
    of the run being settled."""
    from nnfuzz.triage.localize import local_check

    return (lambda: localization(gir, weights, inputs, run, tolerances, export, original, widened),
            lambda: local_check(gir, weights, inputs, run, tolerances, export, original, widened))


# How close each float output must stay to the reference for its nodes' own errors to go unchecked: a
# float64 kernel computed in float32 is 1e-8 to 1e-6 off, inside the float64 tolerance (rtol 1e-6), and a
# float32 one computed in float16 about 5e-4 off, inside rtol 1e-3. Past these, the graph is run with its
# values exposed and a node beyond its accuracy budget is an inconsistency at its source.
SUSPICION: Dict[str, Tuple[float, float]] = {"float64": (1e-11, 1e-13), "float32": (1e-4, 1e-6)}


def suspicious(expected: Optional[Mapping], actual: Optional[Mapping]) -> bool:
    """Whether a passing run's float outputs are further from ``expected`` than rounding explains."""
    import numpy as np

    for name, want in (expected or {}).items():
        got = (actual or {}).get(name)
        want = np.asarray(want)
        if got is None or str(want.dtype) not in SUSPICION or np.shape(got) != want.shape:
            continue
        rtol, atol = SUSPICION[str(want.dtype)]
        with np.errstate(all="ignore"):
            if not np.allclose(np.asarray(got, np.float64), want.astype(np.float64), rtol, atol, equal_nan=True):
                return True
    return False


def settle_locally(judged: Judged, actual, expected, localize: Callable[[], object],
                   check: Callable[[], object]) -> Tuple[Judged, Optional[object]]:
    """(the verdict as each node's own error settles it, the Localization or None). An inconsistency is
    localized (``localize()``): when every node is within its accuracy budget it is rounding noise grown
    downstream, a pass. A pass whose outputs are ``suspicious`` is checked node by node (``check()``, a
    LocalCheck): a node beyond its budget is an inconsistency at its source."""
    from nnfuzz.triage.localize import Localization
    from nnfuzz.verdict import Outcome, Stage

    v = judged.verdict
    if v.symptom is Symptom.inconsistency:
        loc = localize()
        if loc.noise:
            return dataclasses.replace(judged, verdict=Verdict(Outcome.PASS, summary=f"noise: {loc.note}",
                                                               errors=v.errors)), loc
        return judged, loc
    if v.outcome is not Outcome.PASS or not suspicious(expected, actual):
        return judged, None
    local = check().local
    root = local.root if local is not None else None
    if root is None:
        return judged, None
    summary = (f"{root.var}: {root.op} ({root.dtype}) is off on its own inputs by {root.ulps:.3g} ulps, its budget "
               f"{root.budget:g} ({root.kind}); the outputs stay within tolerance")
    bug = Verdict.bug(Symptom.inconsistency, Stage.verify, summary, f"{summary}\n{root.note}", v.errors)
    loc = Localization(None, "system-under-test", root.note, root_cause=root.to_meta())
    return dataclasses.replace(judged, verdict=bug, twin={"available": judged.reference.output_f64 is not None,
                                                          "note": ""}), loc


def err_log(verdict: Verdict) -> str:
    """err.log's text for a verdict."""
    return f"{verdict.summary}\n\n{verdict.detail}\n"


def verdict_fields(verdict: Verdict, res) -> dict:
    """The BugMeta fields a verdict sets."""
    return {"symptom": verdict.symptom.value, "stage": verdict.stage.value, "summary": verdict.summary,
            "errors": verdict.errors, "signal": res.signal}


def bug_signature(meta, verdict: Verdict) -> str:
    """The dedup signature of a bug from its BugMeta and its verdict's error text."""
    from nnfuzz.triage.dedup import signature

    return signature(meta, err_log(verdict))


def replay_meta(meta, judged: Judged, res, localize_run: Optional[Callable[[], dict]]):
    """A replayed bug's BugMeta: ``meta`` (the recorded one) updated with the replay's verdict and, for an
    inconsistency, ``localize_run()``'s localization fields (None: the recorded localization stands,
    e.g. for a folder without gir.json). Its signature is ``bug_signature(it, judged.verdict)``."""
    v = judged.verdict
    fields = verdict_fields(v, res)
    if v.symptom is Symptom.inconsistency:
        fields["float64_twin"] = judged.twin
        if localize_run is not None:
            fields.update(localize_run())
    return meta.replace(**fields)


def judge_rewrite(res, again, engine: str, tolerances: Mapping[str, tuple], aliases: Mapping[str, str],
                  twin=None, jitter=None):
    """(verdict, which model failed: "original" | "rewrite" | "pair" (they disagree) | None) for the
    metamorphic oracle: ``res``
    ran the model, ``again`` (None when the original failed) its rewrite, on the same system. A crash,
    timeout or error of either is a bug (UNSUPPORTED when the system says it lacks something); both
    ran: the rewrite's outputs (and each alias, an extra output copying one) must match the original's
    within ``tolerances``, NaN where the original has NaN included (no reference: the values may be
    outside every op's domain, so NaN and Inf are compared, not excluded). ``twin`` / ``jitter`` (the
    float64 twin and its envelopes, where the values are defined) tell rounding noise from a bug as for
    the reference oracle: a rewrite changes which kernels fuse, so a comparison of near-equal values may
    flip, and an ill-conditioned value may move, with no bug anywhere. Either model may be the wrong
    one, so each is judged against the other as the reference."""
    import numpy as np

    first = judge(res, None, engine, tolerances)
    if not first.is_bug and res.status != "ok":
        return first, None
    if first.is_bug or again is None:
        return first, "original" if first.is_bug else None
    second = judge(again, None, engine, tolerances)
    if again.status != "ok":
        return second, "rewrite" if second.is_bug else None
    want = dict(res.outputs or {})
    want.update({copy: want[src] for copy, src in aliases.items() if src in want})
    got = dict(again.outputs or {})
    for name, w in want.items():  # NaN where the original has NaN: the same value
        g = got.get(name)
        if g is not None and np.shape(g) == np.shape(w) and np.asarray(w).dtype.kind == "f" and np.asarray(g).dtype == np.asarray(w).dtype:
            both = np.isnan(w) & np.isnan(g)
            if both.any():
                want[name], got[name] = np.where(both, 0, w), np.where(both, 0, g)
    if twin is not None:
        twin = {**twin, **{copy: twin[src] for copy, src in aliases.items() if src in twin}}
        jitter = {**(jitter or {}), **{copy: jitter[src] for copy, src in aliases.items() if jitter and src in jitter}}
    verdict = judge(dataclasses.replace(again, outputs=got), want, engine, tolerances, twin=twin, jitter=jitter)
    if twin is not None and not verdict.is_bug:  # symmetric: the original may be the one the twin says is off
        same = {k: got[k] for k in want if k in got}  # not the intermediates the rewrite exposed
        verdict = judge(dataclasses.replace(res, outputs=want), same, engine, tolerances, twin=twin, jitter=jitter)
    return verdict, "pair" if verdict.is_bug else None


def judge_invalid(res, engine: str, declared, record: Mapping) -> Tuple[Verdict, str]:
    """(verdict, outcome) for disruptive mode: ``res`` ran a model breaking ``record["rule"]``. An error
    is the right answer (PASS, outcome "rejected"); a crash (signal, memory) or a timeout is a bug;
    silent acceptance is outcome "accepted" (PASS, counted) unless an output contradicts the type
    ``declared`` (the model's graph.output) for it: then an inconsistency."""
    from nnfuzz.abstract.dtype import DType
    from nnfuzz.verdict import Stage

    if res.status == "error":
        return Verdict.passed(), "rejected"
    if res.status != "ok":
        v = judge(res, None, engine)
        return v, v.label
    outs = res.outputs or {}
    what = f"accepted an invalid model ({record.get('rule')} on {record.get('op')}: {record.get('change')})"
    for d in declared:
        tt = d.type.tensor_type
        if d.name not in outs:
            return Verdict.bug(Symptom.inconsistency, Stage.verify, f"{what}; output {d.name} missing"), "contradicts"
        got = outs[d.name]
        want_dt = DType.parse(tt.elem_type)
        dims = [x.dim_value if x.HasField("dim_value") else None for x in tt.shape.dim] if tt.HasField("shape") else None
        shape = list(getattr(got, "shape", ()))
        if DType.parse(str(got.dtype)) != want_dt or (dims is not None and (
                len(dims) != len(shape) or any(a is not None and a != b for a, b in zip(dims, shape)))):
            return Verdict.bug(Symptom.inconsistency, Stage.verify,
                               f"{what}; output {d.name} is {got.dtype}{shape}, declared {want_dt.value}{dims}"), "contradicts"
    return Verdict.passed(), "accepted"
