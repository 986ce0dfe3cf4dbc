"""Pairwise precision and recall of bug signatures against hand-labelled root causes.

The corpus is tests/cases/dedup/: folders saved by openvino-cpu and tvm-cpu campaigns (meta.json and
err.log, what a signature reads), with labels.json naming each one's root cause as judged by reading
the error and the model. Prints, per system and over all: folders, root causes, signatures, precision,
recall.

    python benchmarks/dedup_quality.py [--corpus tests/cases/dedup] [--show]
"""
from __future__ import annotations

import argparse
from pathlib import Path


def main() -> None:
    from nnfuzz.triage.dedup_quality import by_system, labelled_corpus, pairwise

    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=Path(__file__).parent.parent / "tests" / "cases" / "dedup")
    ap.add_argument("--show", action="store_true", help="print each signature with the labels it holds")
    args = ap.parse_args()
    labels, sigs = labelled_corpus(args.corpus)
    print(f"{'system':14s} {'folders':>7s} {'causes':>7s} {'sigs':>5s} {'precision':>9s} {'recall':>7s}")
    for system, (n, causes, nsigs, p, r) in by_system(labels, sigs).items():
        print(f"{system:14s} {n:7d} {causes:7d} {nsigs:5d} {p:9.3f} {r:7.3f}")
    p, r = pairwise(labels, sigs)
    print(f"{'all':14s} {len(labels):7d} {len(set(labels.values())):7d} {len(set(sigs.values())):5d} {p:9.3f} {r:7.3f}")
    if args.show:
        for s in sorted(set(sigs.values())):
            held = sorted({labels[n] for n in labels if sigs[n] == s})
            print(f"\n{s}\n    {held}")


if __name__ == "__main__":
    main()
