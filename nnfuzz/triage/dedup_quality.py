"""How well signatures group bugs by root cause, against hand labels: pairwise precision and recall.

Over all pairs of folders: a pair is *predicted* together when both have one signature and *truly*
together when both have one hand label. Precision = true-together pairs among predicted-together
ones; recall = predicted-together pairs among truly-together ones (1.0 when there is no such pair).
Scores are given over all folders and apart for crashes (crash and timeout folders) and for
inconsistencies, per system and over all systems (``scores``).
"""
from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Tuple

KINDS = ("crash", "inconsistency", "all")


def pairwise(labels: Dict[str, str], signatures: Dict[str, str]) -> Tuple[float, float]:
    both = together = truly = 0
    for a, b in combinations(sorted(labels), 2):
        same_sig, same_label = signatures[a] == signatures[b], labels[a] == labels[b]
        together += same_sig
        truly += same_label
        both += same_sig and same_label
    return (both / together if together else 1.0), (both / truly if truly else 1.0)


def symptom_kind(symptom: str) -> str:
    """``crash`` for crashes and timeouts (a signature read from the system's error), else
    ``inconsistency`` (one read from the values)."""
    return "crash" if symptom in ("crash", "timeout") else "inconsistency"


class Corpus(NamedTuple):
    labels: Dict[str, str]      # folder -> hand-labelled root cause
    sigs: Dict[str, str]        # folder -> signature by today's rules
    kinds: Dict[str, str]       # folder -> crash | inconsistency
    systems: Dict[str, str]     # folder -> the system that ran it

    def subset(self, keep) -> "Corpus":
        """The folders whose name ``keep(name)`` accepts."""
        names = [n for n in self.labels if keep(n)]
        return Corpus(*({n: d[n] for n in names} for d in self))


def read_corpus(root: Path, variant: Optional[str] = None) -> Corpus:
    """``root``/labels.json (folder -> root cause) and each folder's signature, kind and system;
    ``variant`` (VARIANTS): a signature rule to compare with today's."""
    from nnfuzz.triage.bugstore import read_err_log
    from nnfuzz.triage.dedup import signature

    labels = json.loads((root / "labels.json").read_text())
    sigs, kinds, systems = {}, {}, {}
    for name in labels:
        folder = root / name
        if not (folder / "meta.json").is_file():
            raise FileNotFoundError(f"labels.json names {name!r}, but {folder / 'meta.json'} does not exist: "
                                    "add the folder (meta.json and err.log) or drop its label")
        meta = json.loads((folder / "meta.json").read_text())
        sigs[name] = signature(meta, read_err_log(folder))
        if variant is not None:
            sigs[name] = VARIANTS[variant](meta, sigs[name])
        kinds[name] = symptom_kind(str(meta.get("symptom")))
        systems[name] = str(meta.get("system"))
    return Corpus(labels, sigs, kinds, systems)


def labelled_corpus(root: Path) -> Tuple[Dict[str, str], Dict[str, str]]:
    """``root``/labels.json (folder -> root cause) and each folder's signature by today's rules."""
    c = read_corpus(root)
    return c.labels, c.sigs


def _root_fields(meta: dict):
    """(head, op, dtype, kind) of a root-cause signature (an inconsistency by each node's own error, or a
    crash charged to a node before the op its error names), else None."""
    root = meta.get("root_cause") or {}
    method = root.get("method")
    if not (meta.get("symptom") == "inconsistency" and method == "local-error"
            or meta.get("symptom") in ("crash", "timeout") and method == "prefix"):
        return None
    head = f"{meta.get('system')} | inconsistency"  # a node's fault, as dedup.node_fault signs it
    return head, str(root.get("system_op") or root.get("op")), root.get("dtype"), root.get("kind")


def _with_dtype(meta: dict, sig: str) -> str:
    f = _root_fields(meta)
    return sig if f is None else f"{f[0]} | {f[1]} | {f[2]} | {f[3]}"


def _without_kind(meta: dict, sig: str) -> str:
    f = _root_fields(meta)
    return sig if f is None else f"{f[0]} | {f[1]}"


# signature rules to compare with today's (benchmarks/dedup_quality.py --variant): what a root cause's
# signature would group with its dtype (signature version 6), or without its kind (precision / values)
VARIANTS = {"with-dtype": _with_dtype, "no-kind": _without_kind}


class Score(NamedTuple):
    folders: int
    causes: int
    signatures: int
    precision: float
    recall: float


def score(c: Corpus, system: Optional[str] = None, kind: str = "all") -> Score:
    """The scores of the folders of ``system`` (None: every system) and ``kind`` (crash, inconsistency, all)."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}: use one of {', '.join(KINDS)}")
    names = [n for n in c.labels if (system is None or c.systems[n] == system)
             and (kind == "all" or c.kinds[n] == kind)]
    ls, ss = {n: c.labels[n] for n in names}, {n: c.sigs[n] for n in names}
    return Score(len(names), len(set(ls.values())), len(set(ss.values())), *pairwise(ls, ss))


def scores(c: Corpus) -> Dict[Tuple[str, str], Score]:
    """(system or ``all``, kind) -> Score, for each system and over all, each kind and all kinds."""
    out = {}
    for system in sorted(set(c.systems.values())) + [None]:
        for kind in KINDS:
            out[(system or "all", kind)] = score(c, system, kind)
    return out


def faults(c: Corpus) -> List[Tuple[str, str, List[str]]]:
    """Where the signatures and labels disagree: ("merges", signature, its labels) for a signature that
    holds several root causes, ("splits", label, its signatures) for a root cause under several."""
    out = []
    for s in sorted(set(c.sigs.values())):
        held = sorted({c.labels[n] for n in c.labels if c.sigs[n] == s})
        if len(held) > 1:
            out.append(("merges", s, held))
    for label in sorted(set(c.labels.values())):
        under = sorted({c.sigs[n] for n in c.labels if c.labels[n] == label})
        if len(under) > 1:
            out.append(("splits", label, under))
    return out
