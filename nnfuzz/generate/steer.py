"""Steering away from known bugs (``fuzz.steer_known``, docs/known-bugs.md): a known bug's trigger is not
generated again, so the rest of each model gets tested instead of stopping at the same refusal.

A trigger (nnfuzz/triage/known.py ``KnownBugs.triggers``) names an op and either an input dtype row
(``dtypes``, from a kept folder's node), a dtype (``dtype``: every row with that dtype among its inputs
or outputs, from a known-bugs file entry), or neither (every row), and optionally spellings
(``spelling``: [(key, choice)]; op ``*``: every op's). Without spellings its rows are left out of the rows the generator draws
from (the op's other rows stay; an op left with no row is left out); with spellings the rows stay and
the ONNX writer draws another choice for those keys of that op (ExportSpec ``avoid``, recorded in
meta.json's ``export`` so a replay writes the same model).
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Tuple


def steer(triggers: List[dict], ops: List[type], rows: Dict[str, set], export, policy) -> Tuple[list, dict, object, list]:
    """(ops, rows, export, notes): ``ops`` and ``rows`` (op name -> allowed (in, out) dtype rows; an op
    absent: every row) without the triggers' rows, ``export`` avoiding their spellings, and one note per
    trigger that changed something."""
    from nnfuzz.generate.opset import allowed_rows

    by_name = {c.name: c for c in ops}
    rows = dict(rows)
    avoid, notes = set(getattr(export, "avoid", ()) or ()), []
    for t in triggers:
        cls = by_name.get(t["op"])
        if t["op"] == "*" and t.get("spelling"):  # a spelling every op avoids
            new = {("*", key, choice) for key, choice in t["spelling"]} - avoid
            avoid |= new
            notes += [f"every op spelled {k}={c}" for _, k, c in sorted(new)]
            continue
        if cls is None:
            continue
        if t.get("spelling"):
            new = {(cls.name, key, choice) for key, choice in t["spelling"]} - avoid
            if new:
                avoid |= new
                notes.append(f"{cls.name} spelled " + ",".join(f"{k}={c}" for _, k, c in sorted(new)))
            continue
        have = rows.get(cls.name)
        if have is None:
            have = {(cls.in_dtypes[k], cls.out_dtypes[k]) for k in allowed_rows(cls, policy.dtype_set)}
        keep = {r for r in have if not _hits(t, r)}
        if keep != have:
            rows[cls.name] = keep
            notes.append(f"{cls.name}({','.join(t.get('dtypes') or [t.get('dtype') or '*'])})")
    kept_ops = [c for c in ops if rows.get(c.name, True)]
    if not kept_ops:  # every op is a known trigger: steering would leave nothing to generate
        return ops, dict(rows), export, []
    if avoid and export is not None and hasattr(export, "avoid"):
        export = dataclasses.replace(export, avoid=tuple(sorted(avoid)))
    return kept_ops, rows, export, notes


def _hits(trigger: dict, row) -> bool:
    ins, outs = row
    if trigger.get("dtypes") is not None:
        return tuple(d.value for d in ins) == tuple(trigger["dtypes"])
    if trigger.get("dtype") is not None:
        return any(d.value == trigger["dtype"] for d in (*ins, *outs))
    return True
