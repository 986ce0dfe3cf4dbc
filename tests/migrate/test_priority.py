"""OPERA's prioritization on hand-made signatures: the order computed by hand, and the seed's tie-break."""
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
    """A: 4 tests, one nnfuzz operator already generates it: score 4/2 = 2. B: 1 test, none: 1/1.
    C: 2 tests, three nnfuzz operators: 2/4. Ties go to list order (the tie-break given).
      1. A1, A2, A3, A4 all 2*1: A1. Covered for A: k=1, m>0, (k=1, m>0).
      2. A2 (k=1 old, m<0 new, pair new) 2*2/3; A3 (k>1 new, m>0 old, pair new) 2*2/3; A4 0; B1 1: A2.
      3. A3 still 2*2/3 = 4/3 > B1's 1: A3.      4. A4 is 0 now: B1 (1).
      5. C1, C2 both 1/2: C1.                     6. C2 (p="other" new) 1/2 > A4's 0: C2.   7. A4.
    """
    cands = [
        _cand("A1", "a", {"k": 1, "m": 0.5}), _cand("A2", "a", {"k": 1, "m": -2.0}),
        _cand("A3", "a", {"k": 5, "m": 0.5}), _cand("A4", "a", {"k": 1, "m": 0.25}),
        _cand("B1", "b", {"k": 0}), _cand("C1", "c", {"p": "same"}), _cand("C2", "c", {"p": "other"}),
    ]
    order = prioritize(cands, {"a": 1, "c": 3}, seed=0, tiebreak=list(range(len(cands))))
    assert [r.key for r in order] == ["A1", "A2", "A3", "B1", "C1", "C2", "A4"]
    assert [r.score for r in order] == [2, Fraction(4, 3), Fraction(4, 3), 1, Fraction(1, 2), Fraction(1, 2), 0]


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
    # noparam's score is 2/1 for its first test, then 0; other's 1
    assert [(r.key, r.score) for r in order] == [("n1", 2), ("o1", 1), ("n2", 0)]


def test_the_seed_decides_ties_deterministically():
    cands = [_cand(f"t{i}", f"op{i}", {"k": i}) for i in range(8)]   # all tied: 1 * 1
    orders = {s: [r.key for r in prioritize(cands, {}, seed=s)] for s in range(4)}
    assert orders == {s: [r.key for r in prioritize(cands, {}, seed=s)] for s in range(4)}
    assert len({tuple(o) for o in orders.values()}) > 1
