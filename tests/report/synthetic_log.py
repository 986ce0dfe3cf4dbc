"""Synthetic campaign logs for the report's plots at both ends of the scale: a 20-second campaign's
per-test records (campaign.jsonl, through RunLog as a campaign writes them) and an 8-hour campaign's
per-minute aggregates (campaign.minutes.jsonl beside a rotated part, as fuzz/runlog.py leaves them after
rotation). Shaped like real ort-cpu campaigns: about 60 % pass, 40 % unsupported, a few bugs, op types
that saturate within seconds."""
import bz2
import json
import random
from itertools import accumulate
from pathlib import Path
from typing import List

from nnfuzz.fuzz.runlog import RunLog, minutes_path

OPS = [f"Op{k:02d}" for k in range(90)]
PHASES = {"generate": 0.004, "search": 0.002, "export": 0.001, "compile": 0.006, "execute": 0.0005, "ipc": 0.001}


def _verdict(rng: random.Random) -> str:
    r = rng.random()
    return "pass" if r < 0.6 else "unsupported" if r < 0.995 else "no-graph"


def short_campaign(store: Path, bugs: List[str], seconds: float = 20.0, rate: float = 60.0, seed: int = 1) -> int:
    """campaign.jsonl of a ``seconds`` campaign at ~``rate`` tests/s; one crash record per folder of
    ``bugs`` (spread over the campaign), an inconsistency without a folder. Returns the tests logged."""
    rng = random.Random(seed)
    log = RunLog(store / "campaign.jsonl")
    log.write({"campaign": {"seed": seed, "backend": "ort-cpu", "oracle": "reference", "time_s": seconds,
                            "started": "2026-11-26T12:00:00Z"}, "t": 0.0})
    n = int(seconds * rate)
    ends = list(accumulate(rng.expovariate(1.0) for _ in range(n)))
    times = [1.5 + (seconds - 1.7) * e / ends[-1] for e in ends]  # after start-up and the probe
    found = {int(n * (k + 1) / (len(bugs) + 1)): b for k, b in enumerate(bugs)}
    for k, t in enumerate(times):
        seen = min(len(OPS), 8 + k // 2)  # op types first tested as the campaign goes: saturated after ~3 s
        rec = {"seed": seed + k, "nodes": 10, "ops": rng.sample(OPS[:seen], 6), "verdict": _verdict(rng),
               "format": "onnx", "seconds": {p: round(v * rng.uniform(0.5, 1.5), 4) for p, v in PHASES.items()},
               "t": round(t, 3)}
        if k in found:
            rec.update(verdict="crash", bug=str(store / found[k]))  # no bug_status: the report matches it now
        elif k == n // 2:
            rec.update(verdict="inconsistency")
        log.write(rec)
    log.write({"campaign_end": {"stopped": None, "tests": n, "lost": 0}, "t": seconds + 0.4})
    log.close()
    return n


def long_campaign(store: Path, bugs: List[str], hours: float = 8.0, rate: float = 60.0, seed: int = 2) -> int:
    """campaign.minutes.jsonl of an ``hours`` campaign (and a rotated part, which makes the report read
    the minutes); ``bugs`` found at 10 min, 2 h, ... Returns the tests it counts."""
    rng = random.Random(seed)
    minutes = int(hours * 60)
    at = {m: b for m, b in zip((10, 120, 300, 420), bugs)}
    lines = [{"campaign": {"seed": seed, "backend": "ort-cpu", "oracle": "reference", "time_s": hours * 3600,
                           "started": "2026-11-25T22:00:00Z"}}]
    total, seen = 0, 0
    for m in range(minutes):
        tests = int(rate * 60 * rng.uniform(0.85, 1.1) * (0.6 if m == 0 else 1.0))
        passed = int(tests * 0.6)
        verdicts = {"pass": passed, "unsupported": tests - passed, "no-graph": rng.randint(0, 3)}
        if m in at:
            verdicts["crash"] = 1
        if m % 97 == 5:
            verdicts["inconsistency"] = 1
        new = OPS[seen:min(len(OPS), 80 if m == 0 else seen + (2 if m < 30 else 1 if m % 40 == 0 else 0))]
        seen += len(new)
        lines.append({"minute": {"m": m, "t": 60.0 * m, "span_s": 60.0, "tests": tests, "rate": round(tests / 60, 2),
                                 "verdicts": verdicts, "bugs": [at[m]] if m in at else [],
                                 "seconds": {p: round(v * tests, 3) for p, v in PHASES.items()}, "ops_new": new}})
        total += tests
    lines.append({"campaign_end": {"stopped": None, "tests": total, "lost": 0}, "t": hours * 3600 + 1.0})
    live = store / "campaign.jsonl"
    minutes_path(live).write_text("".join(json.dumps(x) + "\n" for x in lines))
    (store / "campaign.000.jsonl.bz2").write_bytes(bz2.compress((json.dumps(lines[0]) + "\n").encode()))
    live.write_text("")
    return total
