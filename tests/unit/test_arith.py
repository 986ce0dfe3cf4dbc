import pytest
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


def _z3_value(expr) -> int:
    return z3.simplify(expr).as_long()


def test_floordiv_and_mod_on_symbolic_ints_are_smtlib_div_and_mod():
    # the remainder is never negative; for a positive divisor that is Python's floor division too
    cases = {(7, 2): (3, 1), (-7, 2): (-4, 1), (7, -2): (-3, 1), (-7, -2): (4, 1)}
    for (a, b), (q, r) in cases.items():
        x = z3.Int("x")
        s = z3.Solver()
        s.add(x == a)
        assert s.check() == z3.sat
        m = s.model()
        assert m.eval(x // b).as_long() == q and m.eval(x % b).as_long() == r, (a, b)
        assert _z3_value(z3.IntVal(a) // b) == q and _z3_value(a // z3.IntVal(b)) == q
        assert q * b + r == a and 0 <= r < abs(b)
        if b > 0:  # where plain ints and symbolic ints agree
            assert (a // b, a % b) == (q, r)
        else:  # where they differ: Python's remainder takes the divisor's sign
            assert (a // b, a % b) != (q, r) and a % b < 0


def test_floordiv_refuses_non_integer_operands_with_the_fix():
    with pytest.raises(TypeError, match=r"needs integer operands, got 2.5 .*int\(\.\.\.\)"):
        z3.Int("x") // 2.5
    with pytest.raises(TypeError, match="sort Real"):
        z3.Real("r") // 2
