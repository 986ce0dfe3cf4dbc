"""Campaign throughput with the sandbox on: tests per second for 10-node graphs, and where the time goes.

    python benchmarks/fuzz_throughput.py [--seconds 120] [--backends ort-cpu,tvm-cpu]

For each backend: a campaign of --seconds (after a warm-up that fills the probe cache), printing
tests/s and the share of time in generation / value search / export / compile / run / IPC (sandbox
round trip). ``--no-search`` measures the same with plain random values.
With producer processes, generation and export overlap the tests, so their shares are of the
producers' summed time and the shares can add up to more than 100%.
Bugs go to a temporary folder that is deleted afterwards.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path


def one(backend: str, seconds: float, out: Path, producers: int, search: bool = True):
    from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
    from nnfuzz.generate.policy import GenPolicy
    from nnfuzz.materialize.search import SearchConfig

    cc = CampaignConfig(backend=backend, backend_options={}, policy=GenPolicy(max_nodes=10, seed=1),
                        time_s=seconds, out=out, ui="plain", log=None, producers=producers,
                        search=SearchConfig() if search else None)
    return run_campaign(cc)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--backends", default="ort-cpu,tvm-cpu")
    ap.add_argument("--producers", type=int, default=2, help="model-producing processes (0: in-process)")
    ap.add_argument("--no-search", action="store_true", help="plain random values (search=none)")
    args = ap.parse_args()
    rows = []
    for backend in args.backends.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            one(backend, 60.0, Path(tmp) / "warm", 0)  # fills the probe cache so probing is not measured
            c = one(backend, args.seconds, Path(tmp) / "bugs", args.producers, not args.no_search)
        secs = c.seconds
        total = c.elapsed
        phases = ("generate", "search", "export", "compile", "execute", "ipc")
        share = {k: 100.0 * secs.get(k, 0.0) / total for k in phases}
        other = 100.0 - sum(share.values()) if args.producers == 0 else float("nan")  # overlapping shares
        rows.append((backend, c.tests, c.rate(), share, other, dict(c.verdicts)))
    print(f"\n10-node graphs, {args.seconds:g}s campaigns, sandbox on, {args.producers} producer processes, "
          f"value search {'off' if args.no_search else 'on'}")
    for backend, n, rate, share, other, verdicts in rows:
        parts = "  ".join(f"{k} {v:4.1f}%" for k, v in share.items())
        print(f"{backend:8s} {rate:6.1f} tests/s ({n} tests)  {parts}  other {other:4.1f}%  verdicts {verdicts}")


if __name__ == "__main__":
    main()
