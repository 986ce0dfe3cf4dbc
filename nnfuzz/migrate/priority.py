"""OPERA's test prioritization, and the order file (``priority.json``) it writes into the output folder.

OPERA orders tests by *operator instance diversity*: a signature score (``num_lib(op) / num_known(op)``)
times the diversity of the test's parameter setting. On the ONNX node corpus the product put every test
of the most-tested operators first (Attention's 186 tests, then Resize's 39, ...): a test of an operator
with many library tests kept a higher score than any other operator's first test, so the order spent
its start on near-variants of a few operators and found unique bugs later than a random order did
(APFD 0.18 against 0.57 on the first 300 on ort-cpu). Here each test adds the most new coverage
instead, over operator x attributes x dtypes x input shapes:

* a test's items are partition.py's (each parameter's subspace, inputs by dtype, rank and dims, and
  each pair of them), weighted by rarity: an item held by ``k`` tests of the same signature weighs
  ``1/k``, so a value few tests set (a ``layout=1``, an ``align_corners``) counts more than one most
  tests share;
* its diversity is the weighted share of its items not covered by the tests of its signature already
  ordered (a test without parameters: 1 for its signature's first test, 0 after);
* its score is that diversity over ``1 +`` the number of tests of its signature already ordered: every
  signature's first test comes before any signature's second test with no more new coverage (a
  round-robin over operators), and a test that adds nothing comes after every test that adds something.

Greedy: the test with the highest score goes next (a lazy max-heap: a score only ever drops). Ties go to
the higher OPERA signature score: ``num_lib(op)`` over ``1 +`` how many of nnfuzz's own operators already
generate that operator (OPERA divides by the operator's count in the compiler's own test suite;
nnfuzz's generator is the suite it already runs); then to a permutation drawn from ``seed``: the order
is the same for the same seed. Scores are exact fractions, so no rounding decides a tie. Only the
tests' own features (operator, attributes, input dtypes and shapes) enter the order, never a result.
"""
from __future__ import annotations

import collections
import dataclasses
import heapq
import json
from fractions import Fraction
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Sequence

import numpy as np

from nnfuzz.migrate.partition import Item, items, parameters

PRIORITY_FILE = "priority.json"


@dataclasses.dataclass(frozen=True)
class Candidate:
    key: str                       # the folder, relative to the output folder: "onnx-node/test_abs"
    signature: str                 # the operator signature
    base: str                      # the plain operator name matched against nnfuzz's operators
    items: FrozenSet[Item]

    @classmethod
    def of(cls, key: str, migration: dict) -> "Candidate":
        return cls(key, migration["operator"], base_name(migration), items(parameters(migration)))


@dataclasses.dataclass(frozen=True)
class Ranked:
    key: str
    signature: str
    score: Fraction
    signature_score: Fraction
    diversity: Fraction


def base_name(migration: dict) -> str:
    """The operator's plain lower-case name: "Conv" for "Conv/expanded", "conv2d" for "nn.functional.conv2d"."""
    op = migration.get("base") or migration["operator"]
    return op.split("/")[0].split("::")[-1].split(".")[-1].lower()


def diversity(weights: Dict[Item, Fraction], covered: set, seen: bool) -> Fraction:
    """The weighted share of a test's items not in ``covered`` (module docstring)."""
    if not weights:
        return Fraction(0 if seen else 1)
    new = sum((w for it, w in weights.items() if it not in covered), Fraction(0))
    return new / sum(weights.values())


def prioritize(cands: Sequence[Candidate], known: Dict[str, int], seed: int,
               tiebreak: Optional[Sequence[int]] = None) -> List[Ranked]:
    """``cands`` in priority order (module docstring); ``known``: per base name, how many of nnfuzz's
    operators generate it. ``tiebreak`` (a rank per candidate) replaces the permutation drawn from
    ``seed``, to state an order by hand."""
    num_lib = collections.Counter(c.signature for c in cands)
    sig = {c.signature: Fraction(num_lib[c.signature], 1 + known.get(c.base, 0)) for c in cands}
    if tiebreak is None:
        tiebreak = np.random.default_rng(seed).permutation(len(cands)).tolist()
    held = collections.Counter((c.signature, it) for c in cands for it in c.items)
    weights = [{it: Fraction(1, held[c.signature, it]) for it in c.items} for c in cands]
    covered: Dict[str, set] = collections.defaultdict(set)
    taken: Dict[str, int] = collections.Counter()   # tests of each signature already ordered
    heap = [(-Fraction(1), -sig[c.signature], tiebreak[i], i) for i, c in enumerate(cands)]
    heapq.heapify(heap)
    order: List[Ranked] = []
    while heap:
        neg, neg_sig, tb, i = heapq.heappop(heap)
        c = cands[i]
        div = diversity(weights[i], covered[c.signature], taken[c.signature] > 0)
        score = div / (1 + taken[c.signature])
        if score != -neg:   # stale: its signature gained a test since it was pushed
            heapq.heappush(heap, (-score, neg_sig, tb, i))
            continue
        order.append(Ranked(c.key, c.signature, score, sig[c.signature], div))
        covered[c.signature] |= c.items
        taken[c.signature] += 1
    return order


def known_operators() -> Dict[str, int]:
    """Per lower-case operator name, how many of nnfuzz's registered operators carry it."""
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.generate.policy import GenPolicy

    return dict(collections.Counter(c.name.lower() for c in select_ops(GenPolicy(), dialects=("tf",))))


def write_order(out: Path, order: List[Ranked], seed: int) -> Path:
    """``out/priority.json``: the tests in priority order, with their scores."""
    from nnfuzz.triage.folder import atomic_write_text

    doc = {"schema": 1, "seed": seed, "definition": "docs/migration.md#prioritization", "tests": [
        {"rank": r, "folder": t.key, "signature": t.signature, "score": float(t.score),
         "signature_score": float(t.signature_score), "diversity": float(t.diversity)}
        for r, t in enumerate(order)]}
    path = Path(out) / PRIORITY_FILE
    atomic_write_text(path, json.dumps(doc, indent=1))
    return path


def read_order(out: Path) -> List[str]:
    """The folders of ``out/priority.json`` in order; a BugFolderError for a missing or malformed file."""
    from nnfuzz.triage.folder import BugFolderError

    path = Path(out) / PRIORITY_FILE
    try:
        doc = json.loads(path.read_text())
        folders = [t["folder"] for t in doc["tests"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BugFolderError(f"{path} is missing or malformed ({type(e).__name__}: {e}); "
                             f"`nnfuzz migrate` writes it (re-run it on {out})") from None
    bad = [f for f in folders if not isinstance(f, str) or f.startswith("/") or ".." in Path(f).parts]
    if bad:
        raise BugFolderError(f"{path} names folders outside {out}: {bad[:3]}; re-run `nnfuzz migrate`")
    return folders
