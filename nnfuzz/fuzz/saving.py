"""Confirming and saving a campaign's bugs: the re-run (flaky or not), the bug's BugMeta (with its
localization and signature from the one verdict path, triage/judging.py), the bug folder, and the
hand-over to the background reducer."""
from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING

import nnfuzz
from nnfuzz.triage.judging import bug_signature, err_log, localize_meta, verdict_fields
from nnfuzz.triage.meta import BugMeta
from nnfuzz.verdict import Symptom

if TYPE_CHECKING:
    from nnfuzz.fuzz.campaign import Campaign
    from nnfuzz.fuzz.produce import Produced
    from nnfuzz.fuzz.trial import Tested


def confirm_and_save(c: "Campaign", sandbox, p: "Produced", t: "Tested", rec: dict) -> str:
    """Re-run the test (unless disabled or out of time), save the bug, count it; the folder's path."""
    from nnfuzz.fuzz.trial import test

    flaky = False
    if c.cfg.rerun and c.left() > 0 and t.verdict.label != "timeout":  # (a timeout was confirmed already)
        again = test(c, sandbox, p, t.reference)
        flaky = again.verdict is not None and again.verdict.label != t.verdict.label
    meta = bug_meta(c, sandbox, p, t, rec, flaky)
    v = t.verdict
    # what the system was compared with: the other side's outputs when another system ran (None if it
    # never got to run, e.g. after a crash of the system under test), else the torch reference
    other_side = c.expected_info is not None and t.side == "actual"
    oracle = {**t.reference.to_dict(), "output": t.expected if other_side else t.reference.output}
    with c.lock:  # one lane at a time checks the dedup index and takes a folder (fuzz/pool.py)
        sig, dup = c.dedup.check(meta, err_log(v))
        meta = meta.replace(signature=sig, duplicate_of=dup)
        path = c.store.save(model_bytes=p.payload(meta.format), gir_text=p.gir_text, oracle=oracle, meta=meta,
                            err_log=err_log(v), tf_model=_tf_writer(c, p, t.side), rewrite_bytes=p.rewrite_bytes)
        _count(c, meta, path, flaky, v)
        if meta.duplicate_of is None:
            c.guide.bug_saved(path, sig)  # bug-aware guidance: its localized op is down-weighted from now on
        if c.cfg.reduce and meta.duplicate_of is None and c.left() > 0 and p.gir_text is not None \
                and p.rewrite is None and p.invalid is None:  # reduction rebuilds from the graph: neither survives it
            reduce_later(c, path)
    dup_note = f" (duplicate of {meta.duplicate_of})" if meta.duplicate_of else ""
    flag = " (flaky)" if flaky else ""
    c.status.note(f"bug saved: {path}{dup_note}  {v.label}@{v.stage.value}{flag}: {v.summary[:160]}")
    return str(path)


def _count(c: "Campaign", meta: BugMeta, path, flaky: bool, v) -> None:
    n = c.counters
    c.dedup.saved(meta.signature, path.name)
    n.bugs_saved += 1
    n.new_unique += meta.duplicate_of is None
    n.unique_bugs = c.dedup.unique
    n.flaky += flaky
    n.last_bug = f"{path.name}: {v.label} at {v.stage.value}: {v.summary[:100]}"


def bug_meta(c: "Campaign", sandbox, p: "Produced", t: "Tested", rec: dict, flaky: bool) -> BugMeta:
    """The saved bug's meta.json (without its signature)."""
    expected_side = t.side == "expected"
    info = c.expected_info if expected_side else c.info
    meta = BugMeta(
        system=c.spec.expected if expected_side else c.cfg.backend, version=info.version, version_id=info.version_id, seed=p.seed, flaky=flaky,
        nodes=rec.get("nodes"), ops=rec.get("ops"), nnfuzz=nnfuzz.__version__,
        backend_options=c.spec.expected_options if expected_side else c.cfg.backend_options,
        policy=dataclasses.asdict(c.cfg.policy), timings=rec.get("seconds", {}), **export_fields(p),
        search=p.search, format=(c.expected_of(sandbox) if expected_side else sandbox).format_for(p),
        oracle=oracle_meta(c, t.side, p.invalid is not None),
        **verdict_fields(t.verdict, t.result), **migration_fields(p, rec), **noref_fields(p, t))
    if t.verdict.symptom is Symptom.inconsistency and p.rewrite is None and p.invalid is None:
        meta = meta.replace(float64_twin=t.twin, **_localize(c, sandbox, p))
    return meta


def noref_fields(p: "Produced", t: "Tested") -> dict:
    """meta.json's ``rewrite`` (metamorphic oracle: the record, with which model failed) or ``invalid``
    (disruptive mode: the rule the model breaks). Neither is localized: no reference to localize with."""
    out = {}
    if p.rewrite is not None:
        out["rewrite"] = {**p.rewrite, "failed": t.failed}
    if p.invalid is not None:
        out["invalid"] = dict(p.invalid)
    if out and t.verdict.symptom is Symptom.inconsistency:
        out["localization_note"] = "not localized: this oracle has no reference to localize against"
    return out


def migration_fields(p: "Produced", rec: dict) -> dict:
    """meta.json's ``migration`` (the source test, for a bug found by a migrated test) and its opset."""
    if p.gir_text is not None or "migration" not in rec:
        return {}
    return {"migration": rec["migration"], "opset": rec.get("opset") or 17}


def _localize(c: "Campaign", sandbox, p: "Produced") -> dict:
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
        if c.left() <= 0:
            return None
        r = sandbox.run_model(model, inputs, timeout=c.run_timeout(), fmt=sandbox.format_for(p))
        return r.outputs if r.status == "ok" else None

    t0 = time.perf_counter()
    loc = localize_meta(GraphIR.loads(p.gir_text), p.weights, p.oracle.input, run, c.tolerances, p.export)
    c.add_seconds("triage", time.perf_counter() - t0)
    return loc


def export_fields(p: "Produced") -> dict:
    """meta.json's ``opset`` and ``export`` (how the model was written, with its drawn spellings)."""
    if p.export is None:
        return {}
    return {"opset": p.export.opset, "export": p.export.record(p.spellings)}


def oracle_meta(c: "Campaign", side: str, invalid: bool = False) -> dict:
    """meta.json's ``oracle``: which test oracle found the bug (``invalid``: disruptive mode's), and both
    sides' systems and versions."""
    under_test = {"system": c.cfg.backend, "version": c.info.version, "version_id": c.info.version_id,
                  "options": c.cfg.backend_options}
    if c.spec.kind == "metamorphic":
        other = {**under_test, "model": "model_rewrite.onnx"}
    elif c.expected_info is None:
        import torch

        other = {"system": "torch-eager", "version": torch.__version__, "version_id": torch.version.git_version}
    else:
        other = {"system": c.spec.expected, "version": c.expected_info.version,
                 "version_id": c.expected_info.version_id, "options": c.spec.expected_options}
    return {"kind": "invalid" if invalid else c.spec.kind, "side": side, "under_test": under_test, "expected": other}


def _tf_writer(c: "Campaign", p: "Produced", side: str):
    """A writer of the ``model/`` SavedModel folder for bugs of TF systems (None for the others)."""
    if (c.expected_info if side == "expected" else c.info).lowering != "tf":
        return None
    from nnfuzz.materialize.tensorflow.module import saved_model_writer

    return saved_model_writer(p.gir_text, p.weights)


def reduce_later(c: "Campaign", path) -> None:
    """Hand a just-saved bug to the background reducer (fuzz/reducer.py), started on first use."""
    if c.reducer is None:
        from nnfuzz.fuzz.reducer import BackgroundReducer
        from nnfuzz.fuzz.sandbox import Sandbox

        cc = c.cfg

        def make_sandbox(system, options):
            return Sandbox(system, options, test_timeout=cc.test_timeout, memory_limit_mb=cc.memory_limit_mb,
                           backend_path=cc.backend_path if system == cc.backend else None, stop=c.stop)

        def add_seconds(s):
            c.add_seconds("triage", s)

        c.reducer = BackgroundReducer(make_sandbox, c.tolerances, cc.reduce_s, c.deadline,
                                      c.store.lock, c.status.note, add_seconds)
    c.reducer.submit(path)
