"""Graph generation throughput on one core, and the attribute diversity binning buys.

Prints, for graphs of 10 and 30 nodes: valid concrete graphs per second (generation alone) and models
per second (generation + torch build + eager run + ONNX export + checker), each the median of
several runs; then the number of distinct (op, attribute, value) triples over the same seeds with
binning on and off.

    python benchmarks/gen_throughput.py [--seconds 10] [--runs 3]
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time


def rate(fn, seconds: float, start_seed: int) -> float:
    n, seed, t0 = 0, start_seed, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn(seed)
        n += 1
        seed += 1
    return n / (time.perf_counter() - t0)


def distinct_attrs(binning: bool, n_graphs: int) -> int:
    from nnfuzz.generate import GenPolicy
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.generate.symbolic import GraphGenerator

    p = GenPolicy(max_nodes=10, binning=binning)
    ops = select_ops(p)
    seen = set()
    for s in range(n_graphs):
        g = GraphGenerator(dataclasses.replace(p, seed=s), ops).generate()
        for inst in g.insts:
            for k, v in inst.op.attrs.items():
                for x in (v if isinstance(v, (list, tuple)) else [v]):
                    if isinstance(x, int) and not isinstance(x, bool):
                        seen.add((inst.op.name, k, x))
    return len(seen)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10.0, help="length of one measured run")
    ap.add_argument("--runs", type=int, default=3, help="runs per figure (median reported)")
    ap.add_argument("--diversity-graphs", type=int, default=300)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    import torch

    torch.set_num_threads(1)
    from nnfuzz.generate import GenPolicy
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.generate.symbolic import GraphGenerator
    from nnfuzz.materialize.model import build_model
    from nnfuzz.materialize.torch.lowering import has_torch_lowering

    print(f"one core, {args.runs} runs of {args.seconds:g}s each, median reported")
    for nodes in (10, 30):
        p = GenPolicy(max_nodes=nodes)
        ops = select_ops(p, usable=has_torch_lowering)

        def gen(seed, p=p, ops=ops):
            return GraphGenerator(dataclasses.replace(p, seed=seed), ops).generate()

        def gen_export(seed):
            build_model(gen(seed), seed)

        gen(0), gen_export(0)  # warm up imports and caches
        g = [rate(gen, args.seconds, 1000 * r) for r in range(args.runs)]
        m = [rate(gen_export, args.seconds, 1000 * r) for r in range(args.runs)]
        print(f"{nodes:2d} nodes: generation {statistics.median(g):7.1f} graphs/s   "
              f"generation+torch+ONNX export {statistics.median(m):6.1f} models/s   "
              f"(runs: {', '.join(f'{x:.0f}' for x in g)} | {', '.join(f'{x:.1f}' for x in m)})")
    on, off = distinct_attrs(True, args.diversity_graphs), distinct_attrs(False, args.diversity_graphs)
    print(f"distinct (op, attribute, value) over {args.diversity_graphs} graphs of 10 nodes: "
          f"binning on {on}, off {off} ({on / max(off, 1):.2f}x)")


if __name__ == "__main__":
    main()
