"""Pairwise precision and recall of bug signatures against hand-labelled root causes.

The corpus is tests/cases/dedup/: folders saved by ort-cpu, openvino-cpu and tvm-cpu campaigns (meta.json
and err.log, what a signature reads), with labels.json naming each one's root cause as judged by reading
the error, the model and its values. Prints, per system and over all systems, for crashes (crash and
timeout folders), inconsistencies and all folders: folders, root causes, signatures, precision, recall.
A '-' row has no folders of that kind. --show lists each signature with the labels it holds; the
signatures that merge root causes or split one are always listed.

    python benchmarks/dedup_quality.py [--corpus tests/cases/dedup] [--show] [--quiet] [--variant with-dtype] [--only=-c7-]

--variant scores another signature rule on the same labels (the signature of a root cause without its dtype,
or without dtype and kind), to see what a rule change would merge and split.
"""
from __future__ import annotations

import argparse
from pathlib import Path


def main() -> None:
    from nnfuzz.triage.dedup_quality import VARIANTS, faults, read_corpus, scores

    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=Path(__file__).parent.parent / "tests" / "cases" / "dedup")
    ap.add_argument("--show", action="store_true", help="print each signature with the labels it holds")
    ap.add_argument("--variant", choices=sorted(VARIANTS), help="score another signature rule instead of today's "
                    "(with-dtype: a root cause's signature with its dtype, as signature version 6 had it; no-kind: without its kind)")
    ap.add_argument("--quiet", action="store_true", help="the table only (no merges and splits)")
    ap.add_argument("--only", metavar="TEXT", help="score the folders whose name holds TEXT (e.g. -c7-: item 7's campaigns)")
    args = ap.parse_args()
    corpus = read_corpus(args.corpus, args.variant)
    if args.only:
        corpus = corpus.subset(lambda name: args.only in name)
        if not corpus.labels:
            raise SystemExit(f"--only {args.only!r}: no folder of {args.corpus} has it in its name")
    print(f"{'system':14s} {'kind':14s} {'folders':>7s} {'causes':>7s} {'sigs':>5s} {'precision':>9s} {'recall':>7s}")
    for (system, kind), s in scores(corpus).items():
        if s.folders == 0:
            print(f"{system:14s} {kind:14s} {0:7d} {'-':>7s} {'-':>5s} {'-':>9s} {'-':>7s}")
            continue
        print(f"{system:14s} {kind:14s} {s.folders:7d} {s.causes:7d} {s.signatures:5d} {s.precision:9.3f} {s.recall:7.3f}")
    for what, key, held in ([] if args.quiet else faults(corpus)):
        print(f"\n{what}: {key}\n    {held}")
    if args.show:
        labels, sigs = corpus.labels, corpus.sigs
        for s in sorted(set(sigs.values())):
            held = sorted({labels[n] for n in labels if sigs[n] == s})
            print(f"\n{s}\n    {held}")


if __name__ == "__main__":
    main()
