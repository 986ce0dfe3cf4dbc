import z3

from nnfuzz.abstract import arith


def test_helpers_fold_on_ints():
    assert arith.fdiv(7, 2) == 3 and arith.fdiv(-7, 2) == -4
    assert arith.cdiv(7, 2) == 4
    assert arith.smax(3, 9, 4) == 9 and arith.smin(3, 9, 4) == 3
    assert arith.If(True, 1, 2) == 1 and arith.If(False, 1, 2) == 2
    assert arith.And(True, 3 > 2) is True and arith.And(True, False) is False
    assert arith.Or(False, 1 == 1) is True and arith.Or(False, False) is False
    assert arith.select([5, 6, 7], 2) == 7
    assert arith.prod([2, 3, 4]) == 24
    assert arith.distinct([1, 2, 3]) is True and arith.distinct([1, 1]) is False


def test_helpers_agree_with_z3_on_symbols():
    x, y = z3.Int("x"), z3.Int("y")
    exprs = {
        "fdiv": arith.fdiv(x, 3), "cdiv": arith.cdiv(x, 3), "max": arith.smax(x, y), "min": arith.smin(x, y),
        "select": arith.select([x, y, 42], y),
    }
    for xv, yv in [(7, 2), (9, 0), (1, 1)]:
        s = z3.Solver()
        s.add(x == xv, y == yv)
        assert s.check() == z3.sat
        m = s.model()
        got = {k: m.eval(e).as_long() for k, e in exprs.items()}
        assert got["fdiv"] == xv // 3 and got["cdiv"] == -(-xv // 3)
        assert got["max"] == max(xv, yv) and got["min"] == min(xv, yv)
        assert got["select"] == [xv, yv, 42][yv]


def test_and_or_mix_bools_and_terms():
    x = z3.Int("x")
    assert arith.And(True, x > 1).eq(x > 1)
    assert arith.Or(False, x > 1).eq(x > 1)
    assert arith.Or(True, x > 1) is True
