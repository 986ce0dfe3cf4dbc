"""Signatures against hand-labelled root causes (tests/cases/dedup: folders of openvino-cpu, tvm-cpu and ort-cpu
campaigns; the '-c7-' ones are issue 26 item 7's 10-minute default campaigns)."""
import json
from pathlib import Path

import pytest

from nnfuzz.triage.dedup_quality import VARIANTS, read_corpus, score, scores, symptom_kind
from nnfuzz.triage.dedup_quality import labelled_corpus, pairwise

CORPUS = Path(__file__).parent.parent / "cases" / "dedup"


def test_pairwise_on_a_hand_example():
    labels = {"a": "x", "b": "x", "c": "y", "d": "y"}
    # a,b together (right); c,d split (missed); b,c together (wrong)
    sigs = {"a": "1", "b": "1", "c": "1", "d": "2"}
    p, r = pairwise(labels, sigs)
    assert (p, r) == (1 / 3, 1 / 2)  # predicted pairs ab ac bc: one right; true pairs ab cd: one found


def test_scores_apart_for_crashes_and_inconsistencies(tmp_path):
    """A crash and an inconsistency of one root cause under two signatures cost recall over all folders,
    not within each kind."""
    for name, symptom, summary in (("a", "crash", "RuntimeError: boom"), ("b", "crash", "RuntimeError: boom"),
                                   ("c", "inconsistency", "v1: shape [1] != reference []")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "meta.json").write_text(json.dumps({"system": "s", "symptom": symptom, "stage": "compile",
                                                               "summary": summary}))
    (tmp_path / "labels.json").write_text(json.dumps({"a": "one", "b": "one", "c": "one"}))
    c = read_corpus(tmp_path)
    assert c.kinds == {"a": "crash", "b": "crash", "c": "inconsistency"}
    assert score(c, "s", "crash")[3:] == (1.0, 1.0)
    assert score(c, None, "inconsistency").folders == 1
    assert score(c)[3:] == (1.0, 1 / 3)  # pairs ab ac bc truly together; only ab predicted
    assert set(scores(c)) == {(s, k) for s in ("s", "all") for k in ("crash", "inconsistency", "all")}
    assert symptom_kind("timeout") == "crash"
    with pytest.raises(ValueError, match="kind 'crashes'"):
        score(c, None, "crashes")
    (tmp_path / "labels.json").write_text(json.dumps({"a": "one", "gone": "one"}))
    with pytest.raises(FileNotFoundError, match="'gone'"):
        read_corpus(tmp_path)


def test_signatures_match_the_labelled_root_causes_of_the_first_corpus():
    """The 51 folders the signatures were tuned on (before item 7): shape errors and gross value errors.
    Recall was 0.9 until openvino-cpu-0032 (a lone LpNormalization(p=1)) was labelled with the reduce-axes
    fault it is (c7-judgements.md): a fault that spans ops (ReduceL1, LpNormalization) is split by op."""
    labels, sigs = labelled_corpus(CORPUS)
    first = [n for n in labels if "-c7-" not in n]
    assert len(first) >= 50
    p, r = pairwise({n: labels[n] for n in first}, {n: sigs[n] for n in first})
    assert p >= 0.9 and r >= 0.85, (p, r)


def test_signatures_do_not_merge_root_causes_of_real_campaigns():
    """Precision on every folder, crashes and inconsistencies apart. Recall is not held here: one root cause
    spans dtypes, ops and symptoms (benchmarks/dedup_quality.py prints it; issue 26 item 7)."""
    c = read_corpus(CORPUS)
    assert len(c.labels) >= 200
    for kind in ("crash", "inconsistency"):
        assert score(c, None, kind).precision >= 0.95, kind


def test_a_variant_rule_regroups_root_cause_signatures_only():
    c = read_corpus(CORPUS, "with-dtype")
    base = read_corpus(CORPUS)
    assert set(VARIANTS) == {"with-dtype", "no-kind"}
    assert len(set(c.sigs.values())) > len(set(base.sigs.values()))  # the dtype splits root causes
    crash_sigs = {n: s for n, s in base.sigs.items() if " | Resize | " in s and c.kinds[n] == "crash"}
    assert all(c.sigs[n] == s for n, s in crash_sigs.items())  # a crash read from its message is unchanged
