"""Bug-aware guidance (mgen.guide_bugs) on a real system: two campaigns of T minutes each, one after the
other, with reduction on and coverage guidance on, with and without down-weighting known bugs' triggers;
each into a fresh bug store. Prints, for each, the tests run, the bug folders saved, the unique
signatures (folders with no duplicate_of) and the share of saved folders that are duplicates, and the
triggers the guided one down-weighted.

    python benchmarks/bug_guidance.py [--backend tvm-cpu] [--minutes 10] [--seed 1] [--out /tmp/bugguide]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path


def campaign(backend: str, minutes: float, seed: int, out: Path, bugs: bool) -> dict:
    """Run one campaign in a process of its own; its summary from the bug store and campaign.jsonl."""
    cmd = [sys.executable, "-m", "nnfuzz.cli", "fuzz", f"backend={backend}", f"time={minutes * 60:g}s",
           f"fuzz.out={out}", "fuzz.reduce=true", "ui=plain", f"mgen.seed={seed}", "mgen.guide=coverage",
           f"mgen.guide_bugs={'true' if bugs else 'false'}"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"campaign failed (exit {run.returncode}): {' '.join(cmd)}\n{run.stderr[-3000:]}")
    metas = [json.loads((p / "meta.json").read_text()) for p in sorted(out.iterdir()) if p.name.isdigit()]
    from nnfuzz.fuzz.runlog import read_log

    log = list(read_log(out))  # (its rotated parts too)
    end = [r["campaign_end"] for r in log if "campaign_end" in r][-1]
    state = json.loads((out / "guide_state.json").read_text())
    unique = [m for m in metas if not m.get("duplicate_of")]
    return {"tests": end["tests"], "saved": len(metas), "unique": len(unique),
            "dup_share": (len(metas) - len(unique)) / len(metas) if metas else 0.0,
            "top_dups": _top([m["duplicate_of"] for m in metas if m.get("duplicate_of")]),
            "triggers": sorted({f"{t['op']}({','.join(t['dtypes'] or ['*'])})" for t in state["triggers"]})}


def _top(dups):
    from collections import Counter

    return Counter(dups).most_common(3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="tvm-cpu")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("/tmp/nnfuzz-bug-guidance"))
    args = ap.parse_args()
    rows = {}
    for bugs in (False, True):
        out = args.out / ("bug-aware" if bugs else "coverage-only")
        if out.exists() and any(out.iterdir()):
            sys.exit(f"{out} is not empty: pass --out to a fresh folder (each campaign needs its own bug store)")
        rows[bugs] = campaign(args.backend, args.minutes, args.seed, out, bugs)
    print(f"{args.backend}, {args.minutes:g} min per campaign, fuzz.reduce=true, mgen.guide=coverage, seed {args.seed}")
    for bugs, r in rows.items():
        print(f"  mgen.guide_bugs={str(bugs).lower():5s}: {r['tests']} tests, {r['saved']} bug folders, "
              f"{r['unique']} unique signatures, {100 * r['dup_share']:.0f}% of saved folders duplicates "
              f"(most re-found: {r['top_dups']})")
    print(f"  down-weighted triggers (guide_bugs=true): {', '.join(rows[True]['triggers']) or 'none'}")


if __name__ == "__main__":
    main()
