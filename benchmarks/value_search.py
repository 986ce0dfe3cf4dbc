"""How often each way of choosing values makes a generated graph safe, and how long it takes.

For 512 graphs (fixed seeds) of 10, 20 and 30 nodes with the default operator set (every vulnerable
op enabled), it prints the share of graphs whose values are all finite (every intermediate value,
not only the outputs) and the share that is fully safe (also no integer overflow, no input within
a margin of an op's domain edge), with the mean, median and p95 time per graph (building the search
and running it: the mean is what a campaign pays, the tail is most of it), for:

  plain-1      one random draw (what nnfuzz did before the search)
  plain-resample  random re-draws until the budget runs out
  gradient     the search with true gradients only
  proxy        the search with proxy derivatives (the default)
  value-aware  graphs grown with safe values (generate/valueaware.py), then the proxy search from
               them: other graphs than the modes above (insertions without safe values are undone),
               so the line after it prints what growing them cost, per graph, beside blind generation

    python benchmarks/value_search.py [--graphs 512] [--nodes 10 20 30] [--time-ms 100] [--no-ranges] [--modes ...]

``--no-ranges`` generates graphs without the value-range analysis (abstract/ranges.py) to show
how many graphs it keeps from being impossible. One process, one core (torch threads = 1).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

MODES = {
    "plain-1": dict(gradient=False, time_ms=0.0),
    "plain-resample": dict(gradient=False),
    "gradient": dict(proxy=False),
    "proxy": dict(proxy=True),
    "value-aware": dict(proxy=True),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", type=int, default=512)
    ap.add_argument("--nodes", type=int, nargs="+", default=[10, 20, 30])
    ap.add_argument("--time-ms", type=float, default=100.0)
    ap.add_argument("--no-ranges", action="store_true")
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    args = ap.parse_args()

    import dataclasses

    import torch

    from nnfuzz.generate import generate_graph
    from nnfuzz.generate.policy import GenPolicy
    from nnfuzz.materialize.model import random_values
    from nnfuzz.materialize.search import SearchConfig, ValueSearch, warm_up
    from nnfuzz.generate.valueaware import generate_with_values

    torch.set_num_threads(1)
    cfg = SearchConfig(time_ms=args.time_ms)
    print(f"value search: {args.graphs} graphs per size, budget {args.time_ms:g} ms, "
          f"value ranges {'off' if args.no_ranges else 'on'}")
    print(f"{'nodes':>5}  {'mode':<15} {'finite':>7} {'safe':>7} {'mean ms':>8} {'median ms':>10} {'p95 ms':>8}")
    warm = True
    for n in args.nodes:
        t0 = time.perf_counter()
        girs = []
        for seed in range(args.graphs):
            gir = generate_graph(GenPolicy(seed=seed, max_nodes=n, value_ranges=not args.no_ranges))
            girs.append((seed, gir, *random_values(gir, np.random.default_rng(seed))))
        gen_s = time.perf_counter() - t0
        if warm:  # torch's first autograd call pays one-off initialisation
            warm_up()
            ValueSearch(girs[0][1], cfg).run(girs[0][2], girs[0][3], 0)
            warm = False
        for mode in args.modes:
            kw = dict(MODES[mode])
            mcfg = dataclasses.replace(cfg, time_ms=kw.pop("time_ms", cfg.time_ms))
            graphs = girs
            if mode == "value-aware":
                t0 = time.perf_counter()
                graphs = [(seed, *generate_with_values(GenPolicy(seed=seed, max_nodes=n,
                                                                 value_ranges=not args.no_ranges), cfg=cfg)[:3])
                          for seed in range(args.graphs)]
                aware_s = time.perf_counter() - t0
            finite, safe, times = [], [], []
            for seed, gir, weights, inputs in graphs:
                t0 = time.perf_counter()
                r = ValueSearch(gir, mcfg).run(weights, inputs, seed, **kw)
                times.append((time.perf_counter() - t0) * 1000.0)
                finite.append(r.finite)
                safe.append(r.ok)
            print(f"{n:>5}  {mode:<15} {100 * np.mean(finite):6.1f}% {100 * np.mean(safe):6.1f}% "
                  f"{np.mean(times):8.2f} {np.median(times):10.2f} {np.percentile(times, 95):8.1f}", flush=True)
            if mode == "value-aware":
                print(f"{'':>5}  (growing them with values took {1000 * aware_s / args.graphs:.1f} ms per graph, "
                      f"blind generation {1000 * gen_s / args.graphs:.1f} ms)")
        print(f"{'':>5}  (generating the {args.graphs} graphs took {gen_s:.1f} s)")


if __name__ == "__main__":
    main()
