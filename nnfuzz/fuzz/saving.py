"""Confirming and saving a campaign's bugs: the re-run (flaky or not), the bug's BugMeta (with its
localization and signature from the one verdict path, triage/judging.py), the bug folder, and the
hand-over to the background reducer."""
from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING

import nnfuzz
from nnfuzz.triage.judging import err_log, verdict_fields
from nnfuzz.triage.meta import BugMeta
from nnfuzz.triage.rootcause import headline
from nnfuzz.verdict import Symptom

if TYPE_CHECKING:
    from nnfuzz.fuzz.context import RunContext
    from nnfuzz.fuzz.produce import Produced
    from nnfuzz.fuzz.sink import BugSink
    from nnfuzz.oracles.base import Oracle, Tested


def confirm_and_save(ctx: "RunContext", sink: "BugSink", oracle: "Oracle", lane, p: "Produced", t: "Tested",
                     rec: dict) -> dict:
    """Re-run the test (unless disabled, out of time, or the bug will only be counted: a known or
    duplicate signature with its examples kept, fuzz.keep_per_signature), save the bug or count it; the
    fields of the test's campaign.jsonl line: ``bug`` (the folder's path, when saved), ``signature`` and
    ``bug_status`` (new | known | duplicate), ``known`` (what it is known as) and ``kept`` (saved |
    replaced | counted)."""
    meta = bug_meta(ctx, oracle, lane, p, t, rec, False)
    v = t.verdict
    flaky = False
    if ctx.cfg.rerun and ctx.left() > 0 and v.label != "timeout" and sink.decide(meta, err_log(v)).action != "count":
        again = oracle.test(ctx, lane, p, t.reference)  # (a timeout was confirmed already)
        flaky = again.verdict is not None and again.verdict.label != v.label
    # what the system was compared with: the other side's outputs when another system ran (None if it
    # never got to run, e.g. after a crash of the system under test), else the torch reference
    other_side = ctx.expected_info is not None and t.side == "actual"
    reference = {**t.reference.to_dict(), "output": t.expected_outputs if other_side else t.reference.output}
    path, meta, d = sink.save(meta.replace(flaky=flaky), err_log(v), flaky, oracle.reducible(p),
                              model_bytes=p.payload(meta.format), gir_text=p.gir_text, oracle=reference,
                              tf_model=_tf_writer(ctx, p, t.side), rewrite_bytes=p.rewrite_bytes)
    fields = {"signature": d.signature, "bug_status": d.status,
              "kept": {"save": "saved", "replace": "replaced", "count": "counted"}[d.action],
              **({"known": d.known} if d.known else {}), **({"bug": str(path)} if path is not None else {})}
    if path is None:
        return fields
    dup_note = f" (duplicate of {meta.duplicate_of})" if meta.duplicate_of else ""
    known = f" (known: {d.known})" if d.known else ""
    how = "bug saved" if d.action == "save" else "bug saved over a larger example"
    flag = " (flaky)" if flaky else ""
    message = headline(v.summary, err_log(v))[:160]  # the system's innermost message, as the signature reads it
    ctx.note(f"{how}: {path}{dup_note}{known}  {v.label}@{v.stage.value}{flag}: {message}")
    return fields


def bug_meta(ctx: "RunContext", oracle: "Oracle", lane, p: "Produced", t: "Tested", rec: dict, flaky: bool) -> BugMeta:
    """The saved bug's meta.json (without its signature)."""
    theirs = t.side == "expected"  # a bug of the expected side's system
    info = ctx.expected_info if theirs else ctx.info
    meta = BugMeta(
        system=ctx.expected_system if theirs else ctx.cfg.backend, version=info.version,
        version_id=info.version_id, seed=p.seed, flaky=flaky, nodes=rec.get("nodes"), ops=rec.get("ops"),
        nnfuzz=nnfuzz.__version__, backend_options=ctx.expected_options if theirs else ctx.cfg.backend_options,
        policy=dataclasses.asdict(ctx.cfg.policy), timings=rec.get("seconds", {}), **export_fields(p),
        search=p.search, format=(lane.expected_sandbox if theirs else lane.sandbox).format_for(p), found=found_now(ctx),
        **oracle.meta_fields(ctx, p, t), **verdict_fields(t.verdict, t.expected_result if theirs else t.result), **migration_fields(p, rec))
    if t.verdict.symptom is Symptom.inconsistency and oracle.localizes(p):
        loc = t.localization.to_meta() if t.localization is not None else _localize(ctx, lane.sandbox, p, t)
        meta = meta.replace(float64_twin=t.twin, **loc)
    elif t.verdict.symptom is Symptom.crash and not theirs:  # an op downstream of the fault?
        from nnfuzz.fuzz import local
        from nnfuzz.triage.crash_prefix import crash_root_of

        t0 = time.perf_counter()
        with ctx.clock.judging():
            root = crash_root_of(meta, err_log(t.verdict), p.gir_text, p.weights, p.reference.input,
                                 p.payload(meta.format), local.runner(ctx, lane.sandbox, p), local.widened(ctx),
                                 local.results(ctx, lane.sandbox, p))
        ctx.add_seconds("triage", time.perf_counter() - t0)
        meta = meta.replace(root_cause=root)
    return meta


def found_now(ctx: "RunContext") -> dict:
    """meta.json's ``found``: now (UTC), the campaign that saw it (its seed) and the CPU (triage/cpu.py)."""
    from nnfuzz.triage.cpu import this_cpu

    return {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "campaign": {"seed": ctx.cfg.policy.seed},
            "cpu": this_cpu()}


def migration_fields(p: "Produced", rec: dict) -> dict:
    """meta.json's ``migration`` (the source test, for a bug found by a migrated test) and its opset."""
    if p.gir_text is not None or "migration" not in rec:
        return {}
    return {"migration": rec["migration"], "opset": rec.get("opset") or 17}


def _localize(ctx: "RunContext", sandbox, p: "Produced", t: "Tested") -> dict:
    """meta.json's first_divergent_node, blame and root_cause for an inconsistency the oracle did not
    localize (within the time bound). A migrated single-operator test diverges at its one node; a
    multi-node one is not localized (no graph)."""
    from nnfuzz.fuzz import local

    if p.gir_text is None:
        ops = p.rec.get("ops") or []
        if len(ops) == 1:
            return {"first_divergent_node": {"index": 0, "op": ops[0], "var": None, "dtype": None},
                    "localization_note": "a migrated single-operator test"}
        return {"localization_note": "a migrated test has no graph to localize in"}
    t0 = time.perf_counter()
    loc = local.localize(ctx, sandbox, p, t.result.outputs if t.result is not None else None).to_meta()
    ctx.add_seconds("triage", time.perf_counter() - t0)
    return loc


def export_fields(p: "Produced") -> dict:
    """meta.json's ``opset`` and ``export`` (how the model was written, with its drawn spellings)."""
    if p.export is None:
        return {}
    return {"opset": p.export.opset, "export": p.export.record(p.spellings)}


def _tf_writer(ctx: "RunContext", p: "Produced", side: str):
    """A writer of the ``model/`` SavedModel folder for bugs of TF systems (None for the others)."""
    if (ctx.expected_info if side == "expected" else ctx.info).lowering != "tf":
        return None
    from nnfuzz.materialize.tensorflow.module import saved_model_writer

    return saved_model_writer(p.gir_text, p.weights)
