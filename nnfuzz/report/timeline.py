"""The campaign over time, from campaign.jsonl's records: tests per second, verdict counts, op types
tested (the op type coverage of `nnfuzz stats`, over time), bugs saved and the root causes (unique
signatures) among them, new and known apart, and the
time share per phase. A log long enough to be rotated (fuzz/runlog.py) is drawn from its per-minute
aggregates instead, one point a minute.

A record's time is its ``t`` (seconds since its campaign started, written since nnfuzz logs it); an
older log without ``t`` is placed by the running sum of its records' phase seconds, which leaves out
start-up and waiting and so reads as busy time (the plots say which clock they use). Campaigns
appended to one log follow each other on one axis.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Set, Tuple

from nnfuzz.report.store import TESTED, Campaign

BINS = 30  # tests/s is averaged over this many slices of the time axis

Series = List[Tuple[float, float]]


@dataclass
class Timeline:
    clock: str                                  # "wall" (from t) or "busy" (summed phase seconds)
    span: float = 0.0
    rate: Series = field(default_factory=list)
    verdicts: Dict[str, Series] = field(default_factory=dict)
    coverage: Series = field(default_factory=list)
    bugs: Dict[str, Series] = field(default_factory=dict)
    phases: List[Tuple[str, float]] = field(default_factory=list)
    boundaries: List[float] = field(default_factory=list)   # where each campaign starts on the axis
    tested: int = 0                                         # tests that ran (verdicts TESTED)

    @property
    def mean_rate(self) -> float:
        """Tests per second over the whole axis: the campaign's own figure (tests / elapsed), as its
        panel and summary give it, for one campaign whose log ends with campaign_end."""
        return self.tested / self.span if self.span > 0 else 0.0


NEW, KNOWN = "new root causes", "known root causes"


def timeline(campaigns: List[Campaign], signatures: Dict[str, str], known: Set[str] = frozenset()) -> Timeline:
    """``signatures``: bug folder name -> signature, to count unique bugs as they were found; ``known``:
    the signatures that are known bugs (report/standing.py), counted apart from the new ones."""
    if any(c.minutes for c in campaigns):
        return _from_minutes(campaigns, signatures, known)
    wall = all("t" in r for c in campaigns for r in c.records)
    tl = Timeline("wall" if wall else "busy")
    events: List[Tuple[float, dict]] = []
    offset = 0.0
    for c in campaigns:
        tl.boundaries.append(offset)
        busy = 0.0
        end = offset
        for r in c.records:
            busy += sum(r.get("seconds", {}).values())
            x = offset + (r["t"] if wall else busy)
            events.append((x, r))
            end = max(end, x)
        if wall and isinstance((c.end or {}).get("_t"), (int, float)):
            end = max(end, offset + c.end["_t"])  # the campaign ran until its end line, past its last test
        offset = end
    tl.span = offset
    events.sort(key=lambda e: e[0])
    _counts(tl, events, signatures, known)
    _rate(tl, events)
    tl.tested = sum(r.get("verdict") in TESTED for _, r in events)
    phases: Counter = Counter()
    for _, r in events:
        phases.update(r.get("seconds", {}))
    tl.phases = phases.most_common()
    return tl


def _root_cause(tl: Timeline, x: float, sig, sigs: Set[str], known: Set[str]) -> None:
    """Count ``sig`` (a saved folder's signature, None if unknown) as a root cause first seen at ``x``."""
    if sig is None or sig in sigs:
        return
    sigs.add(sig)
    series = tl.bugs.setdefault(KNOWN, [(0.0, 0)]) if sig in known else tl.bugs[NEW]
    series.append((x, series[-1][1] + 1))


def _counts(tl: Timeline, events, signatures, known) -> None:
    verdicts: Counter = Counter()
    ops, sigs = set(), set()
    saved = 0
    tl.bugs = {"bugs saved": [(0.0, 0)], NEW: [(0.0, 0)]}
    tl.coverage = [(0.0, 0)]
    for x, r in events:
        v = r.get("verdict")
        if v is None:
            continue
        verdicts[v] += 1
        tl.verdicts.setdefault(v, [(0.0, 0)]).append((x, verdicts[v]))
        if v in TESTED and not ops.issuperset(r.get("ops", [])):
            ops.update(r.get("ops", []))
            tl.coverage.append((x, len(ops)))
        if isinstance(r.get("bug"), str):
            saved += 1
            tl.bugs["bugs saved"].append((x, saved))
            _root_cause(tl, x, signatures.get(Path(r["bug"]).name), sigs, known)
    for s in [*tl.verdicts.values(), tl.coverage, *tl.bugs.values()]:
        if tl.span and s[-1][0] < tl.span:
            s.append((tl.span, s[-1][1]))  # flat to the end: nothing more happened


def _rate(tl: Timeline, events) -> None:
    tested = [x for x, r in events if r.get("verdict") in TESTED]
    if not tested or tl.span <= 0:
        return
    width = tl.span / BINS
    counts = Counter(min(int(x / width), BINS - 1) for x in tested)
    tl.rate = [((k + 0.5) * width, counts.get(k, 0) / width) for k in range(BINS)]


def _from_minutes(campaigns: List[Campaign], signatures: Dict[str, str], known) -> Timeline:
    """The timeline of a long log from its per-minute aggregates (campaign.minutes.jsonl): each minute is
    one point at its end (tests/s: at its middle)."""
    tl = Timeline("wall")
    verdicts: Counter = Counter()
    phases: Counter = Counter()
    ops, sigs = set(), set()
    saved, offset = 0, 0.0
    tl.bugs = {"bugs saved": [(0.0, 0)], NEW: [(0.0, 0)]}
    tl.coverage = [(0.0, 0)]
    for c in campaigns:
        tl.boundaries.append(offset)
        end = offset
        for m in c.minutes:
            x = offset + m["t"] + m["span_s"]
            end = max(end, x)
            tl.rate.append((offset + m["t"] + m["span_s"] / 2, m["rate"]))
            verdicts.update(m["verdicts"])
            for v in m["verdicts"]:
                tl.verdicts.setdefault(v, [(0.0, 0)])
            for v, s in tl.verdicts.items():
                s.append((x, verdicts[v]))
            if m["ops_new"] and not ops.issuperset(m["ops_new"]):
                ops.update(m["ops_new"])
                tl.coverage.append((x, len(ops)))
            for name in m["bugs"]:
                saved += 1
                _root_cause(tl, x, signatures.get(Path(name).name), sigs, known)
            if m["bugs"]:
                tl.bugs["bugs saved"].append((x, saved))
            phases.update(m["seconds"])
            tl.tested += m["tests"]
        if isinstance((c.end or {}).get("_t"), (int, float)):
            end = max(end, offset + c.end["_t"])
        offset = end
    tl.span = offset
    for s in [*tl.verdicts.values(), tl.coverage, *tl.bugs.values()]:
        if tl.span and s[-1][0] < tl.span:
            s.append((tl.span, s[-1][1]))
    tl.phases = phases.most_common()
    return tl
