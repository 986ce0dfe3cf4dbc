"""Throughput of the gradient oracle against the forward-only one: tests per second of ``oracle=grad`` and
``oracle=reference`` on the same graphs (same policy and seeds), per backend.

    python benchmarks/grad_throughput.py [--seconds 120] [--backends inductor-cpu,xla-cpu] [--nodes 10]

Each campaign runs in this process on the local executor (sandbox workers, as ``nnfuzz fuzz`` does),
``fuzz.workers=1``, after a short warm-up campaign that pays the system's first compile. A backend that
does not run gradient tests (``gradients = False``) prints its forward-only figure and ``oracle=grad: not
supported`` (the ConfigError's words). Prints one line per backend and oracle: tests, tests/s, verdicts, tests skipped for want of a gradient, and the time shares
of compile and execute. Run it on a quiet machine: figures from a shared one are meaningless.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path


def campaign(backend: str, oracle: str, seconds: float, nodes: int, out: Path):
    from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
    from nnfuzz.generate.policy import GenPolicy

    cc = CampaignConfig(backend=backend, backend_options={}, policy=GenPolicy(max_nodes=nodes, seed=1),
                        time_s=seconds, out=out, ui="plain", oracle=oracle, reduce=False, workers=1)
    return run_campaign(cc)


def main(argv=None) -> int:
    from nnfuzz.errors import ConfigError

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--warmup", type=float, default=30.0)
    ap.add_argument("--backends", default="inductor-cpu,xla-cpu")
    ap.add_argument("--nodes", type=int, default=10)
    args = ap.parse_args(argv)
    rows = []
    for backend in args.backends.split(","):
        for oracle in ("reference", "grad"):
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    campaign(backend, oracle, args.warmup, args.nodes, Path(tmp) / "warm")
                    c = campaign(backend, oracle, args.seconds, args.nodes, Path(tmp) / "bugs")
                except ConfigError as e:
                    rows.append(f"{backend:14} {oracle:10} not supported: {e}")
                    continue
            busy = sum(c.seconds.values()) or 1.0
            shares = " ".join(f"{k} {100 * c.seconds.get(k, 0.0) / busy:.0f}%" for k in ("compile", "execute"))
            rows.append(f"{backend:14} {oracle:10} tests {c.tests:5}  {c.rate():6.2f}/s  verdicts {dict(c.verdicts)}  "
                        f"no gradient {c.no_gradient}  {shares}")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
