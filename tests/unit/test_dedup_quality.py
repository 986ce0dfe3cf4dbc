"""Signatures against hand-labelled root causes (tests/cases/dedup: openvino-cpu and tvm-cpu folders)."""
from pathlib import Path

from nnfuzz.triage.dedup_quality import labelled_corpus, pairwise

CORPUS = Path(__file__).parent.parent / "cases" / "dedup"


def test_pairwise_on_a_hand_example():
    labels = {"a": "x", "b": "x", "c": "y", "d": "y"}
    # a,b together (right); c,d split (missed); b,c together (wrong)
    sigs = {"a": "1", "b": "1", "c": "1", "d": "2"}
    p, r = pairwise(labels, sigs)
    assert (p, r) == (1 / 3, 1 / 2)  # predicted pairs ab ac bc: one right; true pairs ab cd: one found


def test_signatures_match_the_labelled_root_causes():
    labels, sigs = labelled_corpus(CORPUS)
    assert len(labels) >= 50
    p, r = pairwise(labels, sigs)
    assert p >= 0.9 and r >= 0.9, (p, r)
