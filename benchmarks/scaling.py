"""Parallel scaling of a campaign: tests/s for 1, 2, ... N workers (``fuzz.workers``), on the local
executor and on Ray (a Ray the campaign starts on this machine), for ort-cpu and tvm-cpu, with the
parallel efficiency ``rate(N) / (N * rate(1))``.

    python benchmarks/scaling.py [--seconds 60] [--workers 1,2] [--backends ort-cpu,tvm-cpu]
                                 [--executors local,ray] [--producers 2]

Each campaign runs as ``nnfuzz fuzz`` runs it, in a fresh process, on 10-node graphs from the same seed,
into a temporary folder deleted afterwards. ``tests`` is the campaign's count over its whole time;
``rate`` is the steady rate, from the end of the first test to the end of the last (campaign.jsonl's
``ended``), so the start-up (imports, producers' warm-up, probe, Ray's start) is left out; efficiency
is computed from it. Take figures on a quiet machine: other load skews them.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERDICTS = ("pass", "unsupported", "crash", "inconsistency", "timeout")


def campaign(backend: str, executor: str, workers: int, seconds: float, producers: int) -> dict:
    """One campaign's summary, plus its steady rate."""
    with tempfile.TemporaryDirectory(prefix="nnfuzz-scaling-") as tmp:
        out = Path(tmp) / "bugs"
        cmd = [sys.executable, "-m", "nnfuzz.cli", "fuzz", f"backend={backend}", f"time={seconds}s", f"fuzz.out={out}",
               "ui=plain", "mgen.seed=1", "mgen.max_nodes=10", f"fuzz.workers={workers}", f"fuzz.executor={executor}",
               f"fuzz.producers={producers}", "ray.address=null"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        summary = json.loads(proc.stdout.strip().splitlines()[-1])
        ends = sorted(r["ended"] for r in _log(out / "campaign.jsonl") if r.get("verdict") in VERDICTS and "ended" in r)
    steady = (len(ends) - 1) / (ends[-1] - ends[0]) if len(ends) > 1 and ends[-1] > ends[0] else 0.0
    return {**summary, "rate": steady}


def _log(path: Path) -> list:
    """The campaign log's records, its rotated parts too (fuzz/runlog.py)."""
    from nnfuzz.fuzz.runlog import exists, read_log

    return list(read_log(path)) if exists(path) else []


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--workers", default=f"1,{os.cpu_count() or 1}")
    ap.add_argument("--backends", default="ort-cpu,tvm-cpu")
    ap.add_argument("--executors", default="local,ray")
    ap.add_argument("--producers", type=int, default=2)
    args = ap.parse_args()
    counts = sorted({int(w) for w in args.workers.split(",")})
    print(f"{'backend':10s} {'executor':8s} {'workers':>7s} {'tests':>6s} {'rate/s':>7s} {'efficiency':>10s}  (cores: {os.cpu_count()})")
    for backend in args.backends.split(","):
        for executor in args.executors.split(","):
            base = None
            for n in counts:
                s = campaign(backend, executor, n, args.seconds, args.producers)
                if n == 1:
                    base = s["rate"]
                eff = s["rate"] / (n * base) if base else float("nan")
                print(f"{backend:10s} {executor:8s} {n:7d} {s['tests']:6d} {s['rate']:7.2f} {eff:10.2f}", flush=True)


if __name__ == "__main__":
    main()
