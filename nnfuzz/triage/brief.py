"""A bug in a few words for people: its op, dtype, symptom and stage, and the one-line message that
carries its root cause (triage/rootcause.py's ``headline``). The campaign's closing summary and
``nnfuzz repro`` show it."""
from __future__ import annotations

from nnfuzz.triage.dedup import representative_op
from nnfuzz.triage.rootcause import failing_op, headline


def brief(meta, err_log: str = "") -> dict:
    """``{op, dtype, symptom, stage, message}`` of a bug's meta (BugMeta) and its err.log text; op and
    dtype are "" where neither the localization nor the system's message names them. The message is read
    with the built-in systems' patterns, as dedup's signature reads it (meta.system may be the display
    name of a "module:Class" backend, which names no class)."""
    root = meta.root_cause or {}
    node = meta.first_divergent_node or {}
    op = representative_op(meta)
    if op == "-":
        op = failing_op(err_log or str(meta.summary)) or \
            (meta.ops[0] if meta.ops and len(set(meta.ops)) == 1 else "")
    return {"op": op, "dtype": str(root.get("dtype") or node.get("dtype") or ""), "symptom": meta.symptom,
            "stage": meta.stage or "", "message": headline(str(meta.summary), err_log, name_op=not op)}


def describe(b: dict) -> str:
    """``"crash at compile in Resize (float32): RuntimeError: ..."``"""
    where = f" in {b['op']}" + (f" ({b['dtype']})" if b["dtype"] else "") if b["op"] else ""
    return f"{b['symptom']}" + (f" at {b['stage']}" if b["stage"] else "") + f"{where}: {b['message']}"
