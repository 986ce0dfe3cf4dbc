"""What the report says of each bug beyond its own files: whether it is new or known (and known as
what), the user's note on it, and when it was first seen.

- **New or known.** A campaign writes each bug's ``bug_status`` and ``known`` into campaign.jsonl
  (fuzz/saving.py): the report takes them from there. A folder the log does not mention (a store without
  a log, a folder moved in by hand) is matched now, as a campaign would match it (triage/known.py's
  ``KnownBugs.match``), against the repository's kept bugs (bugs/kept/: their signatures and known.yaml)
  and the store's own known.yaml. A folder of the kept store itself is ``kept``.
- **Note.** meta.json's ``note`` (written by the user), else the note of the known-bugs file entry that
  links to the folder, else the note of the entry the bug is known as.
- **First seen.** The log's record that saved the folder (campaign, time into it), else meta.json's
  ``found`` (saved by nnfuzz since the field exists; for older kept folders, the date git first holds
  them).
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional

from nnfuzz.triage.known import KNOWN_FILE, Entry, Folder, KnownBugs

STATUSES = ("new", "known", "duplicate", "kept", "?")  # ?: a folder the matcher could not read


def place(root: Path, bugs: list, skip) -> None:
    """Set ``status``, ``known_as`` and ``note`` of each BugEntry of the store ``root`` (in place);
    ``status``/``known_as`` already set from the campaign log are kept. ``skip(what, why)`` lists what
    could not be read."""
    from nnfuzz.triage.bugstore import kept_store

    kept = kept_store()
    own_is_kept = kept is not None and Path(root).resolve() == kept.resolve()
    files = [f for f in ([kept / KNOWN_FILE] if kept is not None else []) + [Path(root) / KNOWN_FILE] if f.is_file()]
    entries: List[Entry] = []
    for f in dict.fromkeys(p.resolve() for p in files):
        try:
            from nnfuzz.triage.known import read_known_file

            entries += read_known_file(f)
        except Exception as e:  # noqa: BLE001 - a ConfigError or what a malformed file raises: listed, not fatal
            skip(f.name, f"known-bugs file not read: {type(e).__name__}: {e}")
    folders, notes = ([], {}) if own_is_kept or kept is None else _kept_folders(kept, skip)
    known = KnownBugs(tuple(folders), tuple(entries))
    for b in bugs:
        linked = _linked(entries, b.path)
        if own_is_kept:
            b.status, b.known_as = "kept", (linked.label if linked else "")
        elif b.status is None:
            try:
                hit = known.match(b.meta, b.signature, b.err_log)
                b.status = "known" if hit else ("duplicate" if b.first != b.id else "new")
                b.known_as = hit or ""
            except Exception as e:  # noqa: BLE001 - a field of a hand-edited meta.json the matcher cannot read
                skip(b.id, f"not matched against the known bugs ({type(e).__name__}: {e}); its status is '?'")
                b.status = "?"
        b.note = b.meta.note or (linked.note if linked else "") or notes.get(b.known_as) or _entry_note(entries, b.known_as)


def _kept_folders(kept: Path, skip):
    """The kept folders' signatures (without triggers: the report does not steer) and their notes."""
    from nnfuzz.triage.bugstore import BUG_DIR, read_err_log
    from nnfuzz.triage.dedup import signature
    from nnfuzz.triage.meta import read_meta

    out, notes = [], {}
    for folder in sorted(p for p in kept.iterdir() if p.is_dir() and BUG_DIR.match(p.name)):
        try:
            meta = read_meta(folder / "meta.json")
            out.append(Folder(f"bugs/kept/{folder.name}", str(meta.system), signature(meta, read_err_log(folder))))
            notes[out[-1].path] = meta.note or ""
        except Exception as e:  # noqa: BLE001 - as triage/known.py: a kept folder that cannot be read is listed
            skip(f"bugs/kept/{folder.name}", f"not read as a known bug: {type(e).__name__}: {e}")
    return out, notes


def _linked(entries: List[Entry], folder: Path) -> Optional[Entry]:
    """The known-bugs file entry whose ``link`` names ``folder`` (bugs/kept/NNNN)."""
    name = f"{folder.parent.name}/{folder.name}"
    return next((e for e in entries if e.link and e.link.rstrip("/").endswith(name)), None)


def _entry_note(entries: List[Entry], known_as: str) -> str:
    """The note of what a bug is known as: a file entry (its label starts with the entry's place), or the
    entry that links to the kept folder it is known as."""
    if not known_as:
        return ""
    hit = next((e for e in entries if known_as.startswith(e.where)), None)
    if hit is not None:
        return hit.note
    return next((e.note for e in entries if e.link and known_as.rstrip("/").endswith(e.link.rstrip("/"))), "")


def seen_text(b, short: bool = False) -> str:
    """When ``b`` (a BugEntry) was first seen, in words (``short``: for the table, the source named by its
    first word)."""
    if b.seen:
        t = b.seen.get("t")
        when = f" at +{_duration(t)}" if isinstance(t, (int, float)) else ""
        started = b.seen.get("started")
        return f"campaign {b.seen['campaign'] + 1}{when}" + (f" (started {_date(started)})" if started else "")
    found = b.meta.found
    if isinstance(found, dict) and found.get("at"):
        seed = (found.get("campaign") or {}).get("seed") if isinstance(found.get("campaign"), dict) else None
        how = f"campaign seed {seed}" if seed is not None else str(found.get("source") or "")
        how = how.split(":")[0] if short else how
        return _date(found["at"]) + (f" ({how})" if how else "")
    return "not recorded"


def _date(iso) -> str:
    """``2026-11-26T13:18:50Z`` -> ``2026-11-26 13:18 UTC``; anything else as it is."""
    s = str(iso)
    return f"{s[:10]} {s[11:16]} UTC" if len(s) >= 16 and s[10] == "T" else s


def _duration(t: float) -> str:
    if t < 120:
        return f"{t:.0f} s"
    if t < 7200:
        return f"{t / 60:.0f} min"
    return f"{t / 3600:.1f} h"


def status_text(b) -> str:
    """The status cell: ``new``, ``known: bugs/kept/0002``, ``known: bugs/kept/known.yaml entry 3`` (an
    entry's note is the bug's note, shown apart)."""
    if b.status != "known" or not b.known_as:
        return str(b.status)
    return f"known: {b.known_as.split(' (')[0]}"


def by_status(bugs) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for b in bugs:
        out[b.status] = out.get(b.status, 0) + 1
    return out
