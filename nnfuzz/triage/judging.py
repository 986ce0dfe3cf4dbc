"""The one verdict path, used by campaigns (fuzz/), ``nnfuzz repro`` and ``nnfuzz reduce``:

    judge the run (nnfuzz/verdict.py)
    -> on a disagreement, the float64 twins decide whether it is only noise (judged again with them)
    -> an inconsistency is localized (triage/localize.py)
    -> the bug's signature (triage/dedup.py) from its BugMeta and error text.

Each step returns its result; nothing is written into its inputs.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Mapping, Optional, Tuple

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


def model_twins(model) -> Tuple[object, str]:
    """(the model's ReferenceData with the float64 twins, why they are missing or "")."""
    from nnfuzz.materialize.model import add_twins

    add_twins(model)
    return model.oracle, model.twin_note or ""


def localize_meta(gir, weights, inputs, run, tolerances, export) -> dict:
    """BugMeta's localization fields for an inconsistency. A localization that cannot be done (the
    graph with every value exposed does not export, say) is recorded as blame "localization-failed"
    with the error; an InternalError (a bug in nnfuzz) propagates."""
    from nnfuzz.triage.localize import localize

    try:
        return localize(gir, weights, inputs, run, tolerances, export).to_meta()
    except InternalError:
        raise
    except NNFuzzError as e:
        return {"first_divergent_node": None, "blame": "localization-failed",
                "localization_note": f"localization failed: {type(e).__name__}: {e}"}


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
