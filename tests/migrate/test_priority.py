"""The prioritization on hand-made signatures: the order computed by hand, and the seed's tie-break."""
from fractions import Fraction

from nnfuzz.migrate.partition import float_class, int_class, items, parameters, subspace, tensor_class
from nnfuzz.migrate.priority import Candidate, prioritize


def _cand(key, op, attrs, inputs=()):
    mig = {"operator": op, "attributes": attrs, "inputs": [{"name": f"x{i}", "dtype": d, "shape": s}
                                                            for i, (d, s) in enumerate(inputs)]}
    return Candidate.of(key, mig)


def test_partitions_follow_opera():
    assert [int_class(v) for v in (-7, -1, 0, 1, 2)] == ["<-1", "-1", "0", "1", ">1"]
    assert [float_class(v) for v in (-0.5, 0.0, 3.0, float("nan"), float("-inf"))] == ["<0", "0", ">0", "nan", "-inf"]
    assert tensor_class("float32", [1, 3, 224, 224]) == "float32|rank 4|1,>1,>1,>1"
    assert tensor_class("int64", [2, 2, 2, 2, 2, 2]) == "int64|rank >5|>1,>1,>1,>1,>1,>1"
    assert subspace([0, 0, 2, 2]) == "list rank 4[0,0,>1,>1]"
    assert subspace(True) != subspace(1) and subspace("SAME_UPPER") != subspace("VALID")
    # two parameters: each one's subspace and their pair
    params = parameters({"attributes": {"k": 1}, "inputs": [{"name": "x", "dtype": "float32", "shape": [2]}]})
    assert params == [("attr:k", "1"), ("input:0", "float32|rank 1|>1")]
    assert len(items(params)) == 3


def test_order_computed_by_hand():
    """Signature scores (ties only): A 4 tests over 1 + 1 nnfuzz operator = 2, B 1/1, C 2/(1 + 3).
    A's items, held by: k=1 (A1 A2 A4: weight 1/3), m>0 (A1 A3 A4: 1/3), (k=1, m>0) (A1 A4: 1/2), and
    weight 1 for m<0, (k=1, m<0) (A2), k>1, (k>1, m>0) (A3). Ties go to list order (the tie-break given).
      1. every test scores 1 (nothing covered): A1 (A's signature score is the highest).
      2. A2: new m<0 and its pair, (1 + 1) / (1/3 + 1 + 1) = 6/7, over 1 + 1 taken: 3/7; A3 also 3/7;
         A4 adds nothing: 0. B1 and C1 still 1: B1, then C1 (every signature's first test first).
      4. C2 (p="other" new) 1 / 2 > A2's 3/7: C2.   5. A2 (3/7, before A3 by list order).
      6. A3: k>1 and its pair still new, 6/7 over 1 + 2: 2/7.   7. A4: 0.
    """
    cands = [
        _cand("A1", "a", {"k": 1, "m": 0.5}), _cand("A2", "a", {"k": 1, "m": -2.0}),
        _cand("A3", "a", {"k": 5, "m": 0.5}), _cand("A4", "a", {"k": 1, "m": 0.25}),
        _cand("B1", "b", {"k": 0}), _cand("C1", "c", {"p": "same"}), _cand("C2", "c", {"p": "other"}),
    ]
    order = prioritize(cands, {"a": 1, "c": 3}, seed=0, tiebreak=list(range(len(cands))))
    assert [r.key for r in order] == ["A1", "B1", "C1", "C2", "A2", "A3", "A4"]
    assert [r.score for r in order] == [1, 1, 1, Fraction(1, 2), Fraction(3, 7), Fraction(2, 7), 0]
    assert [r.signature_score for r in order[:3]] == [2, 1, Fraction(1, 2)]


def test_many_variants_of_one_operator_do_not_crowd_out_the_others():
    """The ONNX node corpus's failure mode: 30 tests of one operator, each with a new attribute value,
    and 5 operators with one test each. Every operator's first test comes before the second of any."""
    cands = [_cand(f"big{i}", "big", {"k": i - 3, "s": f"mode{i}"}) for i in range(30)]
    cands += [_cand(f"op{j}", f"op{j}", {"k": j}) for j in range(5)]
    order = [r.key for r in prioritize(cands, {}, seed=3)]
    assert set(order[:6]) == {"big" + order[0][3:]} | {f"op{j}" for j in range(5)} and order[0].startswith("big"), order


def test_a_rare_value_counts_more_than_a_shared_one():
    """After the first test, the one setting a value no other test sets comes before one that only
    combines values other tests hold too."""
    cands = [_cand("base", "op", {"a": 1, "b": 1}), _cand("common", "op", {"a": 2, "b": 1}),
             _cand("common2", "op", {"a": 2, "b": 1}), _cand("rare", "op", {"a": 1, "b": "x"})]
    order = prioritize(cands, {}, seed=0, tiebreak=[0, 1, 2, 3])
    assert [r.key for r in order][:2] == ["base", "rare"], order


def test_tensor_inputs_are_parameters():
    """The same operator on another dtype or rank covers new subspaces; the same shape class does not."""
    cands = [_cand("f32", "abs", {}, [("float32", [3, 4])]), _cand("f32b", "abs", {}, [("float32", [5, 6])]),
             _cand("i64", "abs", {}, [("int64", [3, 4])])]
    order = prioritize(cands, {}, seed=0, tiebreak=[0, 1, 2])
    assert [r.key for r in order] == ["f32", "i64", "f32b"]
    assert order[-1].diversity == 0


def test_without_parameters_only_the_first_of_a_signature_is_new():
    cands = [_cand("n1", "noparam", {}), _cand("n2", "noparam", {}), _cand("o1", "other", {"k": 1})]
    order = prioritize(cands, {}, seed=0, tiebreak=[0, 1, 2])
    # both first tests score 1 (noparam's higher signature score, 2/1, goes first), then noparam's 0
    assert [(r.key, r.score) for r in order] == [("n1", 1), ("o1", 1), ("n2", 0)]


def test_the_seed_decides_ties_deterministically():
    cands = [_cand(f"t{i}", f"op{i}", {"k": i}) for i in range(8)]   # all tied: 1 * 1
    orders = {s: [r.key for r in prioritize(cands, {}, seed=s)] for s in range(4)}
    assert orders == {s: [r.key for r in prioritize(cands, {}, seed=s)] for s in range(4)}
    assert len({tuple(o) for o in orders.values()}) > 1
