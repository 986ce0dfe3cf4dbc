"""Dynamic shapes on and off (docs/dynamic-shapes.md): same-seed campaign pairs per backend, their
throughput, tests per compile and root causes. To run on a quiet machine (figures from a shared one mean
nothing):

    python benchmarks/dynamic_shapes.py [--time 30m] [--seed 1] [--backends tvm-cpu,inductor-cpu,ort-cpu,openvino-cpu]
                                        [--out dynamic_runs] [--workers auto]

For each backend, ``nnfuzz fuzz backend=B time=T mgen.seed=S fuzz.dynamic=D`` with D = auto and 0, each
in a fresh process, its bugs kept in ``<out>/<backend>-dynamic-<D>/`` (to judge each saved folder: real,
known or nnfuzz's fault). Prints one line per campaign: tests, tests/s, tests per compile, the dynamic
tests' shapes and compiles, new and known root causes.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path


def campaign(backend: str, dynamic: str, time: str, seed: int, out: Path, workers: str) -> dict:
    cmd = ["nnfuzz", "fuzz", f"backend={backend}", f"time={time}", f"mgen.seed={seed}", f"fuzz.dynamic={dynamic}",
           f"fuzz.out={out}", f"fuzz.workers={workers}", "ui=plain", "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(lines[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time", default="30m")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--backends", default="tvm-cpu,inductor-cpu,ort-cpu,openvino-cpu")
    ap.add_argument("--out", default="dynamic_runs")
    ap.add_argument("--workers", default="auto")
    a = ap.parse_args(argv)
    print(f"{'backend':14} {'dynamic':7} {'tests':>6} {'tests/s':>8} {'per compile':>11} {'dyn tests':>9} "
          f"{'shapes':>6} {'compiles':>8} {'new rc':>6} {'known rc':>8}")
    for backend in a.backends.split(","):
        for dynamic in ("auto", "0"):
            s = campaign(backend, dynamic, a.time, a.seed, Path(a.out) / f"{backend}-dynamic-{dynamic}", a.workers)
            d, b = s["dynamic"], s["bugs"]
            print(f"{backend:14} {dynamic:7} {s['tests']:>6} {s['tests_per_s']:>8} {s['tests_per_compile']:>11} "
                  f"{d['tests']:>9} {d['shapes_run']:>6} {d['compiles']:>8} {b['new']['root_causes']:>6} "
                  f"{b['known']['root_causes']:>8}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
