"""``nnfuzz dedup STORE --recheck``: re-derive each folder's root cause on its own system, so that a store
saved by an earlier nnfuzz (or before a system changed) is signed by today's rules.

Each folder is replayed (triage/repro.py) on the system and options it records, one sandbox per system;
where it still shows its symptom, its meta.json takes the replay's localization (``root_cause``,
``first_divergent_node``, blame), a dynamic bug's static check (``dynamic.static``) and signature. A folder
that no longer shows a bug keeps its record and gets ``recheck`` saying so (an inconsistency now judged
rounding noise says "noise"). Nothing else in a folder changes; meta.json is replaced atomically.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Callable, Dict, List

from nnfuzz.triage.folder import BugFolderError, atomic_write_text

LOCALIZATION = ("root_cause", "first_divergent_node", "blame", "localization_note", "float64_twin")


def recheck_store(root: Path, tolerances, make_sandbox: Callable, note: Callable[[str], None] = print) -> List[Dict]:
    """Replay every bug folder of ``root``; ``make_sandbox(system, options)`` gives a started Sandbox
    (used as a context manager). One row per folder: id, outcome, signature before and after."""
    from nnfuzz.triage.bugstore import BUG_DIR, load_bug, read_err_log
    from nnfuzz.triage.dedup import signature

    bugs, rows = {}, []
    for folder in sorted(p for p in Path(root).iterdir() if p.is_dir() and BUG_DIR.match(p.name)):
        try:
            bug = load_bug(folder)
        except BugFolderError as e:
            rows.append({"id": folder.name, "outcome": "unreadable", "error": str(e)})
            continue
        if bug.meta.migration is not None and not bug.meta.system:
            rows.append({"id": folder.name, "outcome": "skipped", "error": "a migrated test no system has run"})
            continue
        key = json.dumps([bug.meta.system, bug.meta.backend_options or {}], sort_keys=True)
        bugs.setdefault(key, []).append(bug)
    for key, group in bugs.items():
        system, options = json.loads(key)
        note(f"recheck: {len(group)} folder(s) on {system}")
        with make_sandbox(system, options) as sandbox:
            sandbox.start()
            for bug in group:
                before = signature(bug.meta, read_err_log(bug.path))
                rows.append(_recheck_one(bug, sandbox, tolerances, before))
                note(f"  {bug.path.name}: {rows[-1]['outcome']}: {rows[-1].get('signature', before)}")
    return sorted(rows, key=lambda r: r["id"])


def _recheck_one(bug, sandbox, tolerances, before: str) -> Dict:
    from nnfuzz.triage.bugstore import read_err_log
    from nnfuzz.triage.dedup import signature
    from nnfuzz.triage.repro import NOT_REPRODUCED, OTHER_FAILURE, REPRODUCED, replay

    r = replay(bug, sandbox, tolerances, relocalize=True)
    if r.outcome == OTHER_FAILURE and r.verdict.label == bug.meta.symptom:
        r = dataclasses.replace(r, outcome=REPRODUCED)  # the same symptom: re-signing is what a recheck is for
    row = {"id": bug.path.name, "outcome": r.outcome, "before": before}
    record = {"outcome": r.outcome, "version": r.version, "verdict": r.verdict.label}
    if r.outcome == NOT_REPRODUCED:
        record.update(verdict="noise" if r.verdict.summary.startswith("noise:") else r.verdict.label,
                      summary=r.verdict.summary[:300])
        meta = bug.meta.replace(extra={**bug.meta.extra, "recheck": record})
    else:
        meta = bug.meta.replace(**{k: getattr(r.meta, k) for k in LOCALIZATION},
                                extra={**bug.meta.extra, "recheck": record})
        if bug.meta.dynamic is not None and r.meta.dynamic is not None:  # the static check made again (repro.py)
            meta = meta.replace(dynamic={**bug.meta.dynamic, "static": r.meta.dynamic.get("static")})
        if meta.symptom == "crash":
            meta = meta.replace(root_cause=_crash_root(bug, meta, sandbox))
        meta = meta.replace(signature=signature(meta, read_err_log(bug.path)))
        row["signature"] = meta.signature
        record["signature_changed"] = meta.signature != before
    atomic_write_text(bug.path / "meta.json", meta.dumps())
    return row


def _crash_root(bug, meta, sandbox):
    from nnfuzz.triage.bugstore import bug_weights, read_err_log
    from nnfuzz.triage.crash_prefix import crash_root_of
    from nnfuzz.triage.repro import outputs_on, replay_format, results_on, widened_of

    fmt = replay_format(bug, sandbox.backend_info)
    return crash_root_of(meta, read_err_log(bug.path), bug.gir_text, bug_weights(bug), dict(bug.oracle["input"]),
                         bug.model_bytes, outputs_on(sandbox, fmt), result=results_on(sandbox, fmt),
                         widened=widened_of(meta.system))
