"""Confirming and saving a campaign's bugs: the re-run (flaky or not), the bug's BugMeta (with its
localization and signature from the one verdict path, triage/judging.py), the bug folder, and the
hand-over to the background reducer."""
from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING

import nnfuzz
from nnfuzz.triage.judging import err_log, localize_meta, verdict_fields
from nnfuzz.triage.meta import BugMeta
from nnfuzz.verdict import Symptom

if TYPE_CHECKING:
    from nnfuzz.fuzz.context import RunContext
    from nnfuzz.fuzz.produce import Produced
    from nnfuzz.fuzz.sink import BugSink
    from nnfuzz.oracles.base import Oracle, Tested


def confirm_and_save(ctx: "RunContext", sink: "BugSink", oracle: "Oracle", lane, p: "Produced", t: "Tested",
                     rec: dict) -> str:
    """Re-run the test (unless disabled or out of time), save the bug, count it; the folder's path."""
    flaky = False
    if ctx.cfg.rerun and ctx.left() > 0 and t.verdict.label != "timeout":  # (a timeout was confirmed already)
        again = oracle.test(ctx, lane, p, t.reference)
        flaky = again.verdict is not None and again.verdict.label != t.verdict.label
    meta = bug_meta(ctx, oracle, lane, p, t, rec, flaky)
    v = t.verdict
    # what the system was compared with: the other side's outputs when another system ran (None if it
    # never got to run, e.g. after a crash of the system under test), else the torch reference
    other_side = ctx.expected_info is not None and t.side == "actual"
    reference = {**t.reference.to_dict(), "output": t.expected_outputs if other_side else t.reference.output}
    path, meta = sink.save(meta, err_log(v), v, flaky, oracle.reducible(p), model_bytes=p.payload(meta.format),
                           gir_text=p.gir_text, oracle=reference, tf_model=_tf_writer(ctx, p, t.side),
                           rewrite_bytes=p.rewrite_bytes)
    dup_note = f" (duplicate of {meta.duplicate_of})" if meta.duplicate_of else ""
    flag = " (flaky)" if flaky else ""
    ctx.note(f"bug saved: {path}{dup_note}  {v.label}@{v.stage.value}{flag}: {v.summary[:160]}")
    return str(path)


def bug_meta(ctx: "RunContext", oracle: "Oracle", lane, p: "Produced", t: "Tested", rec: dict, flaky: bool) -> BugMeta:
    """The saved bug's meta.json (without its signature)."""
    theirs = t.side == "expected"  # a bug of the expected side's system
    info = ctx.expected_info if theirs else ctx.info
    meta = BugMeta(
        system=ctx.expected_system if theirs else ctx.cfg.backend, version=info.version,
        version_id=info.version_id, seed=p.seed, flaky=flaky, nodes=rec.get("nodes"), ops=rec.get("ops"),
        nnfuzz=nnfuzz.__version__, backend_options=ctx.expected_options if theirs else ctx.cfg.backend_options,
        policy=dataclasses.asdict(ctx.cfg.policy), timings=rec.get("seconds", {}), **export_fields(p),
        search=p.search, format=(lane.expected_sandbox if theirs else lane.sandbox).format_for(p),
        **oracle.meta_fields(ctx, p, t), **verdict_fields(t.verdict, t.expected_result if theirs else t.result), **migration_fields(p, rec))
    if t.verdict.symptom is Symptom.inconsistency and oracle.localizes(p):
        meta = meta.replace(float64_twin=t.twin, **_localize(ctx, lane.sandbox, p))
    return meta


def migration_fields(p: "Produced", rec: dict) -> dict:
    """meta.json's ``migration`` (the source test, for a bug found by a migrated test) and its opset."""
    if p.gir_text is not None or "migration" not in rec:
        return {}
    return {"migration": rec["migration"], "opset": rec.get("opset") or 17}


def _localize(ctx: "RunContext", sandbox, p: "Produced") -> dict:
    """meta.json's first_divergent_node and blame for an inconsistency (within the time bound). A migrated
    single-operator test diverges at its one node; a multi-node one is not localized (no graph)."""
    from nnfuzz.gir import GraphIR

    if p.gir_text is None:
        ops = p.rec.get("ops") or []
        if len(ops) == 1:
            return {"first_divergent_node": {"index": 0, "op": ops[0], "var": None, "dtype": None},
                    "localization_note": "a migrated single-operator test"}
        return {"localization_note": "a migrated test has no graph to localize in"}

    def run(model, inputs):
        if ctx.left() <= 0:
            return None
        r = sandbox.run_model(model, inputs, timeout=ctx.run_timeout(), fmt=sandbox.format_for(p))
        return r.outputs if r.status == "ok" else None

    t0 = time.perf_counter()
    loc = localize_meta(GraphIR.loads(p.gir_text), p.weights, p.reference.input, run, ctx.tolerances, p.export)
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
