"""Migrated tests on real systems: what they find, and how early the prioritized order finds it (APFD).

For each backend, every migrated test of the corpus (or the first --limit in priority order) runs once
through `nnfuzz fuzz fuzz.source=...` (rerun off). Printed per backend: tests, passes, known limitations
(UNSUPPORTED verdicts), bugs and unique signatures, time, and the APFD of the priority order against the
mean APFD of --random random orders of the same tests, where each unique signature is one fault:

    APFD = 1 - (TF_1 + ... + TF_m) / (n * m) + 1 / (2 n)

(n tests, m faults, TF_i the position of the first test that reveals fault i). Then each signature with
the source test that found it first.

    python benchmarks/migration.py [--corpus migrated/] [--backends ort-cpu,tvm-cpu,openvino-cpu]
                                   [--limit 300] [--random 10]

Without --corpus, the ONNX node tests are migrated into a temporary folder first.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def apfd(order, fault_of) -> float:
    """``order``: test ids; ``fault_of``: id -> fault (signature) or None."""
    n, first = len(order), {}
    for pos, t in enumerate(order, 1):
        f = fault_of.get(t)
        if f is not None and f not in first:
            first[f] = pos
    m = len(first)
    if not n or not m:
        return float("nan")
    return 1 - sum(first.values()) / (n * m) + 1 / (2 * n)


def run(backend: str, corpus: Path, limit: int, work: Path) -> dict:
    out = work / backend
    cmd = [sys.executable, "-c", "import sys; from nnfuzz.cli import main; sys.exit(main(sys.argv[1:]))",
           "fuzz", f"backend={backend}", f"fuzz.source={corpus}", "time=6h", f"fuzz.max_tests={limit}",
           "fuzz.rerun=false", "fuzz.producers=0", f"fuzz.out={out}", "ui=plain"]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"{backend}: the campaign failed (exit {r.returncode}):\n{r.stderr[-2000:]}")
    tested, fault_of = [], {}
    from nnfuzz.fuzz.runlog import read_log

    for rec in read_log(out):  # (its rotated parts too)
        if "migration" not in rec or "verdict" not in rec:
            continue
        tid = rec["migration"]["folder"]
        tested.append((tid, rec["verdict"]))
        if rec.get("bug"):
            fault_of[tid] = json.loads((Path(rec["bug"]) / "meta.json").read_text())["signature"]
    return {"backend": backend, "tested": tested, "fault_of": fault_of, "seconds": took}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--backends", default="ort-cpu,tvm-cpu,openvino-cpu")
    ap.add_argument("--limit", type=int, default=0, help="the first N tests in priority order (0: all)")
    ap.add_argument("--random", type=int, default=10, help="random orders to average")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus = args.corpus
        if corpus is None:
            corpus = work / "migrated"
            subprocess.run([sys.executable, "-c", "import sys; from nnfuzz.cli import main; sys.exit(main(sys.argv[1:]))",
                            "migrate", "source=onnx-node", f"out={corpus}", "ui=plain"], check=True, capture_output=True)
        print(f"{'backend':14s} {'tests':>5s} {'pass':>5s} {'known':>5s} {'bugs':>5s} {'sigs':>5s} {'time':>6s} "
              f"{'APFD prio':>9s} {'APFD rand':>9s}")
        found = []
        for backend in args.backends.split(","):
            r = run(backend, corpus, args.limit, work)
            order = [t for t, _ in r["tested"]]
            verdicts = [v for _, v in r["tested"]]
            rand = []
            for seed in range(args.random):
                perm = list(order)
                random.Random(seed).shuffle(perm)
                rand.append(apfd(perm, r["fault_of"]))
            sigs = set(r["fault_of"].values())
            print(f"{backend:14s} {len(order):5d} {verdicts.count('pass'):5d} {verdicts.count('unsupported'):5d} "
                  f"{len(r['fault_of']):5d} {len(sigs):5d} {r['seconds']:5.0f}s {apfd(order, r['fault_of']):9.3f} "
                  f"{sum(rand) / max(len(rand), 1):9.3f}")
            for sig in sorted(sigs):
                first = next(t for t in order if r["fault_of"].get(t) == sig)
                found.append(f"{sig[:150]}\n    first found by {first}")
        for f in found:
            print(f)


if __name__ == "__main__":
    main()
