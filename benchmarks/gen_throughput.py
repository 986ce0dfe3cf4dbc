"""Graph generation throughput on one core, and the attribute diversity binning buys.

Prints, for graphs of 10, 30 and 100 nodes: valid concrete graphs per second (generation alone) and the
mean ms per inserted operator (flat in graph size when no step of an insertion scans the whole graph);
for 10 and 30 nodes also models per second (generation + torch build + eager run + ONNX + checker) for
both ONNX paths (written directly with drawn opsets and spellings, and torch's exporter), each the
median of several runs; the median cost of writing one model's ONNX by each path (without and with the
full checker and strict shape inference); then the number of distinct (op, attribute, value) triples
over the same seeds with binning on and off.

With ``--guide`` it prints only 10-node generation graphs/s with coverage guidance (mgen.guide) off and on.

    python benchmarks/gen_throughput.py [--seconds 10] [--runs 3] [--models 200] [--guide]
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
        n += fn(seed) is not False
        seed += 1
    return n / (time.perf_counter() - t0)


def generation_rate(policy, ops, seconds: float, start_seed: int):
    """(graphs/s, ms per inserted operator) generating from consecutive seeds for ``seconds``."""
    from nnfuzz.generate.symbolic import GraphGenerator

    n, inserted, seed, t0 = 0, 0, start_seed, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        gen = GraphGenerator(dataclasses.replace(policy, seed=seed), ops)
        gen.generate()
        inserted += gen.stats["forward"] + gen.stats["backward"]
        n += 1
        seed += 1
    elapsed = time.perf_counter() - t0
    return n / elapsed, 1e3 * elapsed / max(inserted, 1)


def guide_rates(ops, seconds: float, runs: int) -> None:
    """10-node generation graphs/s with coverage guidance off and on (runs alternate; the guided runs
    share one guide state, as a campaign's producer does, and pay for counting each graph's coverage)."""
    from nnfuzz.generate import GenPolicy
    from nnfuzz.generate.guide import Guide, graph_coverage
    from nnfuzz.generate.symbolic import GraphGenerator

    guide = Guide()

    def one(policy, g):
        gir = GraphGenerator(policy, ops, guide=g).generate()
        if g is not None:
            g.state.add(graph_coverage(gir))

    rates = {"none": [], "coverage": []}
    for r in range(runs):
        for mode in rates:
            p = GenPolicy(max_nodes=10, guide=mode)
            rates[mode].append(rate(lambda s, p=p, mode=mode: one(dataclasses.replace(p, seed=s),
                                                                 guide if mode == "coverage" else None),
                                    seconds, 1000 * r))
    off, on = statistics.median(rates["none"]), statistics.median(rates["coverage"])
    print(f"guidance: 10-node generation off {off:.1f} graphs/s, on {on:.1f} graphs/s ({100 * (on / off - 1):+.1f}%; "
          f"runs off {', '.join(f'{x:.1f}' for x in rates['none'])}, on {', '.join(f'{x:.1f}' for x in rates['coverage'])}; "
          f"guide state after: {guide.state.sizes()})")


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


def _specs():
    from nnfuzz.materialize.onnx.spec import ExportSpec

    return ExportSpec(via="onnx", opset=None), ExportSpec(via="torch", opset=17)


DIRECT, TORCH = _specs()


def building_cost(ops, n_models: int) -> None:
    """Median ms to write one 10-node model's ONNX by each path, on the same built models."""
    import torch

    from nnfuzz.errors import NNFuzzError
    from nnfuzz.generate import GenPolicy
    from nnfuzz.generate.symbolic import GraphGenerator
    from nnfuzz.materialize.model import build_model
    from nnfuzz.materialize.onnx.export import check_onnx, to_onnx

    p = GenPolicy(max_nodes=10)
    models = [build_model(GraphGenerator(dataclasses.replace(p, seed=s), ops).generate(), s, export=False)
              for s in range(n_models)]
    for name, spec in (("direct", DIRECT), ("torch exporter", TORCH)):
        plain, checked, failed = [], [], []
        for m in models:  # warm-up, not measured: a campaign's process fills its schema and attribute caches once
            try:
                with torch.no_grad():
                    to_onnx(m.gir, m.weights, m.module, m.torch_inputs, spec.for_model(m.seed + 10**6))
            except NNFuzzError:
                pass
        for m in models:
            t0 = time.perf_counter()
            try:
                with torch.no_grad():
                    proto, _, _ = to_onnx(m.gir, m.weights, m.module, m.torch_inputs, spec.for_model(m.seed))
                t1 = time.perf_counter()
                check_onnx(proto, [m.gir.vars[o] for o in m.gir.outputs], m.gir.outputs)
            except NNFuzzError as e:  # counted and shown: a model this path cannot write
                failed.append(f"seed {m.seed}: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
                continue
            plain.append(t1 - t0)
            checked.append(time.perf_counter() - t0)
        print(f"ONNX building per 10-node model ({name}): median {1e3 * statistics.median(plain):6.2f} ms, "
              f"with checker + strict shape inference {1e3 * statistics.median(checked):6.2f} ms "
              f"({len(plain)} models, {len(failed)} not written)")
        for f in failed[:5]:
            print(f"    {f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10.0, help="length of one measured run")
    ap.add_argument("--runs", type=int, default=3, help="runs per figure (median reported)")
    ap.add_argument("--diversity-graphs", type=int, default=300)
    ap.add_argument("--models", type=int, default=200, help="models per path for the ONNX building cost")
    ap.add_argument("--guide", action="store_true", help="only: generation graphs/s with coverage guidance on vs off")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    import torch

    torch.set_num_threads(1)
    from nnfuzz.generate import GenPolicy
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.generate.symbolic import GraphGenerator
    from nnfuzz.errors import NNFuzzError
    from nnfuzz.generate.opset import usable_with
    from nnfuzz.materialize.model import build_model

    print(f"one core, {args.runs} runs of {args.seconds:g}s each, median reported")
    direct, exporter = usable_with({"torch"}, "onnx"), usable_with({"torch"}, "torch")
    ops = select_ops(GenPolicy(), usable=lambda c: direct(c) and exporter(c))  # the ops both paths write
    if args.guide:
        return guide_rates(ops, args.seconds, args.runs)
    building_cost(ops, args.models)
    for nodes in (10, 30, 100):
        p = GenPolicy(max_nodes=nodes)

        def gen(seed, p=p):
            return GraphGenerator(dataclasses.replace(p, seed=seed), ops).generate()

        def gen_export(seed, spec):
            try:
                build_model(gen(seed), seed, export=spec.for_model(seed))
            except NNFuzzError:
                return False  # not written by this path: not counted as a model

        paths = {"direct": DIRECT, "torch exporter": TORCH} if nodes <= 30 else {}
        gen(0), [gen_export(0, s) for s in paths.values()]  # warm up imports and caches
        g = [generation_rate(p, ops, args.seconds, 1000 * r) for r in range(args.runs)]
        rates, ms = [x for x, _ in g], [y for _, y in g]
        print(f"{nodes:3d} nodes: generation {statistics.median(rates):7.1f} graphs/s, "
              f"{statistics.median(ms):6.3f} ms per inserted operator "
              f"(runs: {', '.join(f'{x:.0f}' for x in rates)} graphs/s)")
        for name, spec in paths.items():
            m = [rate(lambda s: gen_export(s, spec), args.seconds, 1000 * r) for r in range(args.runs)]
            print(f"           generation+torch+ONNX ({name}) {statistics.median(m):6.1f} models/s "
                  f"(runs: {', '.join(f'{x:.1f}' for x in m)})")
    on, off = distinct_attrs(True, args.diversity_graphs), distinct_attrs(False, args.diversity_graphs)
    print(f"distinct (op, attribute, value) over {args.diversity_graphs} graphs of 10 nodes: "
          f"binning on {on}, off {off} ({on / max(off, 1):.2f}x)")


if __name__ == "__main__":
    main()
