"""Triage figures: how many folders a campaign saves, how many distinct signatures they hold, and
how far reduction shrinks the distinct ones.

    python benchmarks/triage.py [--minutes 30] [--backends ort-cpu,tvm-cpu] [--reduce-s 60] [--keep DIR]

Runs a campaign of --minutes per backend into one temporary store (10-node graphs, the default
config), then `nnfuzz dedup` and `nnfuzz reduce` on the first folder of every signature, and prints:
folders saved, unique signatures, median node count before and after reduction, and the median
reduction time. The issue's aim: reduced graphs with a median of at most 3 nodes.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--backends", default="ort-cpu,tvm-cpu")
    ap.add_argument("--reduce-s", type=float, default=60.0)
    ap.add_argument("--keep", default=None, help="write the bug store here instead of a temporary folder")
    args = ap.parse_args()

    from nnfuzz.cli import main as nnfuzz

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(args.keep or tmp) / "bugs"
        for backend in args.backends.split(","):
            nnfuzz(["fuzz", f"backend={backend}", f"time={args.minutes * 60:.0f}s", f"fuzz.out={store}", "ui=plain"])
        if not store.is_dir() or not any(p.name.isdigit() for p in store.iterdir()):
            print("no bugs saved: nothing to triage")
            return
        nnfuzz(["dedup", str(store)])
        index = json.loads((store / "index.json").read_text())
        before, after, seconds = [], [], []
        for group in index["groups"]:
            folder = store / group["folders"][0]
            nodes = json.loads((folder / "meta.json").read_text()).get("nodes")
            nnfuzz(["reduce", str(folder), f"reduce_s={args.reduce_s:g}"])
            meta = json.loads((folder / "meta.json").read_text())
            red = meta.get("reduced") or {"nodes_before": nodes, "nodes_after": nodes, "seconds": 0.0}
            before.append(red["nodes_before"])
            after.append(red["nodes_after"])
            seconds.append(red["seconds"])
        print(f"\ntriage of {args.minutes:g}-minute campaigns on {args.backends}")
        print(f"folders saved        {index['bugs']}")
        print(f"unique signatures    {index['unique']}")
        print(f"median nodes         {statistics.median(before):g} before, {statistics.median(after):g} after reduction")
        print(f"median reduction     {statistics.median(seconds):.1f} s per bug (budget {args.reduce_s:g} s)")


if __name__ == "__main__":
    main()
