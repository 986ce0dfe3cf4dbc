"""How well signatures group bugs by root cause, against hand labels: pairwise precision and recall.

Over all pairs of folders: a pair is *predicted* together when both have one signature and *truly*
together when both have one hand label. Precision = true-together pairs among predicted-together
ones; recall = predicted-together pairs among truly-together ones (1.0 when there is no such pair).
"""
from __future__ import annotations

import json
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Dict, Tuple


def pairwise(labels: Dict[str, str], signatures: Dict[str, str]) -> Tuple[float, float]:
    both = together = truly = 0
    for a, b in combinations(sorted(labels), 2):
        same_sig, same_label = signatures[a] == signatures[b], labels[a] == labels[b]
        together += same_sig
        truly += same_label
        both += same_sig and same_label
    return (both / together if together else 1.0), (both / truly if truly else 1.0)


def labelled_corpus(root: Path) -> Tuple[Dict[str, str], Dict[str, str]]:
    """``root``/labels.json (folder -> root cause) and each folder's signature by today's rules."""
    from nnfuzz.triage.bugstore import read_err_log
    from nnfuzz.triage.dedup import signature

    labels = json.loads((root / "labels.json").read_text())
    sigs = {}
    for name in labels:
        meta = json.loads((root / name / "meta.json").read_text())
        sigs[name] = signature(meta, read_err_log(root / name))
    return labels, sigs


def by_system(labels: Dict[str, str], sigs: Dict[str, str]) -> Dict[str, Tuple[int, int, int, float, float]]:
    """system -> (folders, root causes, signatures, precision, recall)."""
    systems = Counter(s.split(" | ")[0] for s in sigs.values())
    out = {}
    for system in sorted(systems):
        names = [n for n in labels if sigs[n].startswith(system + " |")]
        ls, ss = {n: labels[n] for n in names}, {n: sigs[n] for n in names}
        out[system] = (len(names), len(set(ls.values())), len(set(ss.values())), *pairwise(ls, ss))
    return out
