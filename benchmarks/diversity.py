"""Coverage guidance (mgen.guide) against unguided generation, at equal graph counts.

For each mode (``none``, ``coverage``), in a process of its own, generates the graphs of seeds 0, 1, ...
(10 nodes; the guided run keeps one guide state over them, as a campaign does) and prints:

- every metric of ``nnfuzz stats`` (nnfuzz/stats: Isra's eleven and HirGen's coverage counts) over the
  first 1,000 and 10,000 graphs, relative to the op corpus generated from;
- the graphs needed to reach 90 %, 99 % and 100 % of the operator x dtype combinations of the probed set
  (``--probe-cache``: a probe cache file of a backend, ~/.cache/nnfuzz/probe/*.json, whose supported rows
  the generator is then limited to, as in that backend's campaign; default: every row the policy allows);
- with ``--frontend N``: line coverage of TVM's Relax ONNX frontend reached by the first N models of each
  mode (benchmarks/frontend_coverage.py, ONNX written directly with drawn opsets and spellings).

    python benchmarks/diversity.py [--graphs 1000,10000] [--probe-cache FILE] [--frontend 300] [--no-build]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

MODES = ("none", "coverage")
SHARES = (0.9, 0.99, 1.0)
HERE = Path(__file__).parent


def probed_rows(path):
    """op name -> supported (in_dtypes, out_dtypes) rows, from a probe cache file (fuzz/probe.py)."""
    from nnfuzz.fuzz.probe import parse_row

    cached = json.loads(Path(path).read_text())
    return {op: {parse_row(k) for k, ok in rows.items() if ok} for op, rows in cached.items()}


def run_mode(mode: str, counts, nodes: int, probe_cache) -> dict:
    """In this process: the metrics at each of ``counts`` graphs and the op x dtype coverage curve."""
    from nnfuzz.errors import ConstraintError
    from nnfuzz.generate import GenPolicy
    from nnfuzz.generate.guide import Guide, graph_coverage
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.generate.symbolic import GraphGenerator
    from nnfuzz.stats.corpus import from_gir
    from nnfuzz.stats.metrics import OpCorpus, compute

    policy = GenPolicy(max_nodes=nodes, guide=mode)
    rows = probed_rows(probe_cache) if probe_cache else {}
    ops = select_ops(policy)
    if rows:
        ops = [c for c in ops if c.name not in rows or rows[c.name]]
    gen0 = GraphGenerator(dataclasses.replace(policy, seed=0), ops, rows)
    target = {(c.name, tuple(d.value for d in c.in_dtypes[k])) for c in ops for k in gen0._rows(c)}
    guide = Guide() if mode == "coverage" else None
    graphs, seen, reached, metrics, failed = [], set(), {}, {}, 0
    t0 = time.perf_counter()
    seed = 0
    while len(graphs) < max(counts):
        try:
            gir = GraphGenerator(dataclasses.replace(policy, seed=seed), ops, rows, guide).generate()
        except ConstraintError:
            failed += 1
            seed += 1
            continue
        seed += 1
        if guide is not None:
            guide.state.add(graph_coverage(gir))
        g = from_gir(gir)
        graphs.append(g)
        seen.update((n.op, n.in_dtypes) for n in g.nodes)
        share = len(seen & target) / len(target)
        for s in SHARES:
            if share >= s and str(s) not in reached:
                reached[str(s)] = len(graphs)
        if len(graphs) in counts:
            metrics[len(graphs)] = compute(graphs, OpCorpus.nnfuzz(ops))
    return {"mode": mode, "metrics": metrics, "reached": reached, "target": len(target),
            "covered": len(seen & target), "missing": sorted(map(str, target - seen))[:8],
            "no_graph": failed, "seconds": time.perf_counter() - t0}


def frontend(mode: str, models: int, nodes: int, build: bool) -> subprocess.Popen:
    cmd = [sys.executable, str(HERE / "frontend_coverage.py"), "--one", "onnx-random", "--guide", mode,
           "--models", str(models), "--nodes", str(nodes)] + ([] if build else ["--no-build"])
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result(proc: subprocess.Popen, what: str) -> dict:
    out, err = proc.communicate()
    if proc.returncode != 0:
        sys.exit(f"{what}: the measuring process failed (exit {proc.returncode}):\n{err[-3000:]}")
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", default="1000,10000", help="graph counts to compare at (comma-separated)")
    ap.add_argument("--nodes", type=int, default=10)
    ap.add_argument("--probe-cache", help="a backend's probe cache file: its supported rows are the probed set")
    ap.add_argument("--frontend", type=int, default=300, help="models per mode for TVM frontend coverage (0: skip)")
    ap.add_argument("--no-build", action="store_true", help="frontend coverage: import only (no tvm.compile)")
    ap.add_argument("--one", choices=MODES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    counts = sorted({int(x) for x in args.graphs.split(",")})
    if args.one:
        print(json.dumps(run_mode(args.one, counts, args.nodes, args.probe_cache)))
        return
    procs = {}
    for mode in MODES:  # the two modes run side by side: nothing here is timed
        cmd = [sys.executable, __file__, "--one", mode, "--graphs", args.graphs, "--nodes", str(args.nodes)]
        procs[mode] = subprocess.Popen(cmd + (["--probe-cache", args.probe_cache] if args.probe_cache else []),
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    fronts = {m: frontend(m, args.frontend, args.nodes, not args.no_build) for m in MODES} if args.frontend else {}
    res = {m: result(p, f"mode {m}") for m, p in procs.items()}
    fr = {m: result(p, f"frontend coverage, mode {m}") for m, p in fronts.items()}
    print_report(res, fr, counts, args)


def print_report(res, fr, counts, args) -> None:
    probed = f"probed set of {args.probe_cache}" if args.probe_cache else "every row the policy allows"
    print(f"{args.nodes}-node graphs, unguided (mgen.guide=none) vs guided (mgen.guide=coverage); op x dtype target: "
          f"{res['none']['target']} combinations ({probed})")
    keys = [k for k, v in res["none"]["metrics"][str(counts[0])].items() if isinstance(v, (int, float))]
    head = "".join(f"{f'{m}@{n}':>18s}" for n in counts for m in MODES)
    print(f"{'metric':24s}{head}")
    for k in keys:
        cells = [res[m]["metrics"][str(n)][k] for n in counts for m in MODES]
        print(f"{k:24s}" + "".join(f"{v:18.4f}" if isinstance(v, float) else f"{v:18d}" for v in cells))
    for m in MODES:
        r = res[m]
        steps = ", ".join(f"{float(s):.0%} after {r['reached'].get(str(s), '-')}" for s in SHARES)
        print(f"op x dtype coverage, {m:8s}: {steps} graphs; {r['covered']}/{r['target']} at the end"
              + (f" (missing e.g. {', '.join(r['missing'][:4])})" if r["covered"] < r["target"] else "")
              + f"; no graph for {r['no_graph']} seeds; {r['seconds']:.0f}s")
    for m, r in fr.items():
        print(f"TVM Relax ONNX frontend, first {r['models']} models, {m:8s}: {r['covered']}/{r['statements']} lines "
              f"(import failed {r['import_failed']}, build failed {r['build_failed']}, not written {r['not_written']})")


if __name__ == "__main__":
    main()
