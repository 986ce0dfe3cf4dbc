"""What a report shows, gathered from a bug store: its bug folders grouped by signature (the grouping of
`nnfuzz dedup`, triage/dedup.py), the campaigns of its campaign.jsonl, and its corpus statistics
(`nnfuzz stats`).

A store from someone else may hold anything: a folder whose meta.json does not parse, a log line that is
not a JSON object, a field of the wrong type. Each becomes a ``Skipped`` entry the report shows (what and
why), never a crash and never a silent gap.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from nnfuzz.errors import NNFuzzError
from nnfuzz.triage.meta import BugMeta

LOG = "campaign.jsonl"
TESTED = ("pass", "unsupported", "crash", "inconsistency", "timeout")  # verdicts of a test that ran


@dataclass
class Skipped:
    what: str     # a folder name, "campaign.jsonl line 7", "campaign.000.jsonl.bz2 line 3", "statistics"
    error: str


@dataclass
class BugEntry:
    id: str
    path: Path
    meta: BugMeta
    signature: str
    op: str
    err_log: str
    first: str                                     # the first folder with this signature (itself if unique)
    duplicates: List[str] = field(default_factory=list)  # later folders with this signature (on the first)
    seen: Optional[dict] = None                    # the campaign log's record of it: campaign, t
    status: Optional[str] = None                   # new | known | duplicate | kept (report/standing.py)
    known_as: str = ""                             # what it is known as: a kept folder, a known-bugs entry
    note: str = ""                                 # what it is, in the user's words (meta.json note, known.yaml)


@dataclass
class Campaign:
    """One campaign of campaign.jsonl: its header line, its test records (each with ``_line``), its end;
    or, for a log long enough to be rotated, its per-minute aggregates (``minutes``) instead of records."""
    header: dict = field(default_factory=dict)
    records: List[dict] = field(default_factory=list)
    end: Optional[dict] = None                     # its campaign_end line (``_t``: when it was written)
    minutes: List[dict] = field(default_factory=list)

    @property
    def n_records(self) -> int:
        return len(self.records) + sum(sum(m["verdicts"].values()) for m in self.minutes)

    @property
    def n_tested(self) -> int:
        return sum(r.get("verdict") in TESTED for r in self.records) + sum(m["tests"] for m in self.minutes)


@dataclass
class StoreData:
    root: Path
    bugs: List[BugEntry]
    campaigns: List[Campaign]
    skipped: List[Skipped]
    has_log: bool
    stats: Optional[dict] = None                   # nnfuzz stats' metrics of the store's graphs

    @property
    def unique(self) -> List[BugEntry]:
        return [b for b in self.bugs if b.first == b.id]


def gather(root, with_stats: bool = True) -> StoreData:
    """Everything the report shows about the store ``root`` (an existing folder)."""
    root = Path(root)
    skipped: List[Skipped] = []
    bugs = _bugs(root, skipped)
    from nnfuzz.fuzz.runlog import exists

    from nnfuzz.fuzz.runlog import parts

    has_log = exists(root / LOG)
    campaigns = []
    if has_log and parts(root / LOG):  # a long log: its minutes (the records of hours would not fit a page)
        campaigns = read_minute_log(root / LOG, skipped)
    if has_log and not campaigns:
        campaigns = read_log(root / LOG, skipped)
    by_id = {b.id: b for b in bugs}
    for k, c in enumerate(campaigns):
        found = [(r["bug"], r.get("t"), r) for r in c.records if isinstance(r.get("bug"), str)]
        found += [(name, m["t"] + m["span_s"], {}) for m in c.minutes for name in m["bugs"]]
        for bug, t, r in found:
            b = by_id.get(Path(bug).name)
            if b is not None and b.seen is None:
                b.seen = {"campaign": k, "t": t, "started": c.header.get("started")}
                if isinstance(r.get("bug_status"), str):
                    b.status, b.known_as = r["bug_status"], str(r.get("known") or "")
    from nnfuzz.report.standing import place

    place(root, bugs, lambda what, why: skipped.append(Skipped(what, why)))
    data = StoreData(root, bugs, campaigns, skipped, has_log)
    if with_stats and bugs:
        data.stats = _stats(root, skipped)
    return data


def _bugs(root: Path, skipped: List[Skipped]) -> List[BugEntry]:
    from nnfuzz.triage.bugstore import BUG_DIR, read_err_log
    from nnfuzz.triage.dedup import signature
    from nnfuzz.triage.meta import read_meta

    bugs: List[BugEntry] = []
    first: Dict[str, BugEntry] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and BUG_DIR.match(p.name)):
        try:
            meta = read_meta(folder / "meta.json", required=())
            err = read_err_log(folder)
            sig, op = signature(meta, err), bug_op(meta, err)
        except NNFuzzError as e:
            skipped.append(Skipped(folder.name, f"{type(e).__name__}: {e}"))
            continue
        except (TypeError, AttributeError, ValueError, KeyError) as e:  # a field of the wrong type in meta.json
            skipped.append(Skipped(folder.name, f"meta.json holds a malformed field ({type(e).__name__}: {e})"))
            continue
        b = BugEntry(folder.name, folder, meta, sig, op, err, folder.name)
        if sig in first:
            b.first = first[sig].id
            first[sig].duplicates.append(b.id)
        else:
            first[sig] = b
        bugs.append(b)
    return bugs


def bug_op(meta: BugMeta, err_log: str) -> str:
    """The op a bug is in: the first divergent node (inconsistencies), else the op the system's error
    names (triage/rootcause.py), else the graph's only op, else its op types when there are at most
    three ("Sign / Max"); "-" if none of these tells (a larger graph whose error names no op)."""
    from nnfuzz.triage.dedup import representative_op
    from nnfuzz.triage.rootcause import root_cause

    op = representative_op(meta)
    if op == "-" and meta.symptom != "inconsistency":
        op = root_cause(str(meta.summary), err_log)[0] or "-"
    if op == "-" and isinstance(meta.ops, list) and 0 < len(set(map(str, meta.ops))) <= 3:
        op = " / ".join(dict.fromkeys(map(str, meta.ops)))
    return op


def read_log(path: Path, skipped: List[Skipped]) -> List[Campaign]:
    """The campaigns of a campaign log (fuzz/runlog.py: its rotated parts, then the live file; each
    campaign starts at a ``campaign`` line); a line that is not a JSON object, or whose fields have the
    wrong types, is skipped and listed (a killed campaign's cut last line too). Each test record gets
    ``_line``, its place in the log ("campaign.003.jsonl.bz2 line 7")."""
    from nnfuzz.fuzz.logcodec import decode
    from nnfuzz.fuzz.runlog import log_lines

    campaigns: List[Campaign] = []
    try:
        for name, n, line, whole in log_lines(path):
            where = f"{name} line {n}"
            try:
                rec = decode(json.loads(line))
            except (ValueError, RecursionError) as e:
                cut = "" if whole else "cut (a killed campaign's last line), "
                skipped.append(Skipped(where, f"{cut}not JSON ({e}): {line[:120]}"))
                continue
            problem = check_record(rec)
            if problem:
                skipped.append(Skipped(where, problem))
                continue
            if "campaign" in rec:
                campaigns.append(Campaign(header={**rec["campaign"], "_t": rec.get("t")}))
                continue
            if not campaigns:  # a log whose first lines were cut: the records still count
                campaigns.append(Campaign())
            if "campaign_end" in rec:
                campaigns[-1].end = {**rec["campaign_end"], "_t": rec.get("t")}
            elif "cut" in rec and len(rec) == 1:
                skipped.append(Skipped(where, f"cut (a killed campaign's last line): {str(rec['cut'])[:120]}"))
            else:
                campaigns[-1].records.append({**rec, "_line": where})
    except (OSError, EOFError) as e:  # (EOFError: a part whose compressed stream ends early)
        skipped.append(Skipped(str(path.name), f"cannot be read: {e}"))
    return campaigns


def read_minute_log(path: Path, skipped: List[Skipped]) -> List[Campaign]:
    """The campaigns of a log's campaign.minutes.jsonl (fuzz/runlog.py): headers, minutes, ends; a
    minute line of the wrong shape is skipped and listed. [] when there is no such file."""
    from nnfuzz.fuzz.runlog import minutes_path

    mp = minutes_path(path)
    campaigns: List[Campaign] = []
    try:
        lines = mp.read_text(errors="replace").splitlines() if mp.is_file() else []
    except OSError as e:
        skipped.append(Skipped(mp.name, f"cannot be read: {e}"))
        return campaigns
    for n, line in enumerate(lines, 1):
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError) as e:
            skipped.append(Skipped(f"{mp.name} line {n}", f"not JSON ({e}): {line[:120]}"))
            continue
        problem = check_record(rec) or (check_minute(rec["minute"]) if isinstance(rec, dict) and "minute" in rec
                                        else None)
        if problem:
            skipped.append(Skipped(f"{mp.name} line {n}", problem))
        elif "campaign" in rec:
            campaigns.append(Campaign(header={**rec["campaign"], "_t": rec.get("t")}))
        elif campaigns and "campaign_end" in rec:
            campaigns[-1].end = {**rec["campaign_end"], "_t": rec.get("t")}
        elif "minute" in rec:
            if not campaigns:
                campaigns.append(Campaign())
            campaigns[-1].minutes.append(rec["minute"])
    return campaigns


def check_minute(m) -> Optional[str]:
    """Why a minute aggregate cannot be used (None if it can)."""
    ok = (isinstance(m, dict) and all(_number(m.get(k)) and m[k] >= 0 for k in ("t", "span_s", "tests", "rate"))
          and isinstance(m.get("verdicts"), dict) and all(_number(v) for v in m["verdicts"].values())
          and isinstance(m.get("bugs"), list) and all(isinstance(b, str) for b in m["bugs"])
          and isinstance(m.get("seconds"), dict) and all(_number(v) for v in m["seconds"].values())
          and isinstance(m.get("ops_new"), list) and all(isinstance(o, str) for o in m["ops_new"]))
    return None if ok else f"'minute' must be a minute's aggregate (t, span_s, tests, rate, verdicts, bugs, seconds, ops_new), got {m!r:.80}"


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_record(rec) -> Optional[str]:
    """Why a campaign.jsonl record cannot be used (None if it can)."""
    if not isinstance(rec, dict):
        return f"a line must be a JSON object, got {type(rec).__name__}"
    for key in ("campaign", "campaign_end"):
        if key in rec and not isinstance(rec[key], dict):
            return f"{key!r} must be an object, got {rec[key]!r:.80}"
    if "t" in rec and not (_number(rec["t"]) and rec["t"] >= 0):
        return f"'t' must be seconds (a number >= 0), got {rec['t']!r:.80}"
    if "verdict" in rec and not isinstance(rec["verdict"], str):
        return f"'verdict' must be a string, got {rec['verdict']!r:.80}"
    secs = rec.get("seconds", {})
    if not isinstance(secs, dict) or not all(isinstance(k, str) and _number(v) and v >= 0 for k, v in secs.items()):
        return f"'seconds' must map phases to seconds, got {secs!r:.80}"
    ops = rec.get("ops", [])
    if not isinstance(ops, list) or not all(isinstance(o, str) for o in ops):
        return f"'ops' must be a list of op names, got {ops!r:.80}"
    if "bug" in rec and not isinstance(rec["bug"], (str, type(None))):
        return f"'bug' must be a folder path, got {rec['bug']!r:.80}"
    return None


def _stats(root: Path, skipped: List[Skipped]) -> Optional[dict]:
    """`nnfuzz stats`' metrics of the store's bug graphs (None, with a Skipped entry, if they fail)."""
    from nnfuzz.stats.corpus import load_corpus
    from nnfuzz.stats.metrics import compute, corpus_for

    try:
        graphs, unreadable = load_corpus(root)
        if len({g.level for g in graphs}) > 1:  # migrated tests (model.onnx only) beside graphs: one level, the
            graphs, unreadable = max((load_corpus(root, lv) for lv in ("gir", "onnx")), key=lambda c: len(c[0]))  # fuller
        result = compute(graphs, corpus_for([graphs]))
        result["_level"] = graphs[0].level
    except NNFuzzError as e:
        skipped.append(Skipped("statistics", f"{type(e).__name__}: {e}"))
        return None
    skipped.extend(Skipped("statistics", f"left out: {u}") for u in unreadable)
    return result
