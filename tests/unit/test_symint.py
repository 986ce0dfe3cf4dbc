"""nnfuzz.abstract.symint: the generator's own symbolic ints agree with z3 terms and plain ints."""
import random

import pytest
import z3

from nnfuzz.abstract import arith, symint
from nnfuzz.abstract.symint import Pred, Term


def _random_expr(rng, depth, leaves):
    """The same random expression built twice: over symint variables and over z3 variables."""
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.4:
            c = rng.randint(-9, 9)
            return c, c
        name = rng.choice(sorted(leaves))
        return leaves[name]
    kind = rng.choice(["+", "-", "*", "//", "%", "neg", "if", "max"])
    a, za = _random_expr(rng, depth - 1, leaves)
    if kind == "neg":
        return -a if isinstance(a, Term) else -a, -za
    b, zb = _random_expr(rng, depth - 1, leaves)
    if kind == "if":
        c, zc = _random_expr(rng, depth - 1, leaves)
        return arith.If(a < b, c, a), z3.If(za < zb, zc, za)
    if kind == "max":
        return arith.smax(a, b), z3.If(za >= zb, za, zb)
    ops = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
           "//": lambda x, y: x // y, "%": lambda x, y: x % y}
    f = ops[kind]
    if kind in ("//", "%") and not isinstance(b, Term) and not isinstance(a, Term):
        return _random_expr(rng, depth - 1, leaves)  # plain ints follow Python's rules, not SMT-LIB's
    return f(a, b), (za / zb if kind == "//" else f(za, zb))


def test_values_agree_with_z3_including_negative_divisors():
    rng = random.Random(0)
    names = ["a", "b", "c"]
    leaves = {n: (symint.var(n), z3.Int(n)) for n in names}
    checked = 0
    for _ in range(400):
        e, ze = _random_expr(rng, 4, leaves)
        if not isinstance(e, Term):
            continue
        env = {n: rng.randint(-12, 12) for n in names}
        got = symint.value(e, env)
        if got is None:  # a division by zero: z3 leaves it unconstrained
            continue
        subst = [(z3.Int(n), z3.IntVal(v)) for n, v in env.items()]
        assert got == z3.simplify(z3.substitute(ze, *subst)).as_long(), (e, env)
        checked += 1
    assert checked > 150


def test_div_and_mod_are_smtlib_for_every_sign():
    x = symint.var("x")
    for a, b, q, r in [(7, 2, 3, 1), (-7, 2, -4, 1), (7, -2, -3, 1), (-7, -2, 4, 1)]:
        assert symint.value(x // b, {"x": a}) == q and symint.value(x % b, {"x": a}) == r
        assert symint.value(x / b, {"x": a}) == q  # z3's ``/`` on Int terms is div too
    assert symint.value(x // 0, {"x": 3}) is None


def test_bool_compares_structure_like_z3_and_refuses_orderings():
    a, b = symint.var("a"), symint.var("b")
    assert bool(a + 1 == a + 1) and not bool(a == b) and bool(a != b)
    assert [a, b].index(b) == 1 and (a in [b]) is False
    with pytest.raises(TypeError, match="cannot be cast to concrete Boolean"):
        bool(a < b)
    with pytest.raises(TypeError, match="cannot be cast to concrete Boolean"):
        max(a, b)


def test_arith_helpers_build_symint_terms():
    a, b, i = symint.var("a"), symint.var("b"), symint.var("i")
    exprs = {
        "if": arith.If(a < b, a, b), "and": arith.And(a >= 1, b >= 1, True), "or": arith.Or(a == 1, b == 2),
        "not": arith.Not(a <= b), "implies": arith.Implies(a == 1, b == 2), "max": arith.smax(a, b, 3),
        "min": arith.smin(a, b), "prod": arith.prod([a, b, 2]), "select": arith.select([a, b, 7], i),
        "distinct": arith.distinct([a, b, i]), "divisible": arith.divisible(a, b), "fdiv": arith.fdiv(a, 2),
        "cdiv": arith.cdiv(a, b), "divisor": arith.divisor(b),
    }
    assert all(arith.is_sym(e) for e in exprs.values()) and arith.simplify(exprs["max"]) is exprs["max"]
    for env in [{"a": 1, "b": 2, "i": 0}, {"a": 6, "b": 3, "i": 2}, {"a": 4, "b": 4, "i": 1}]:
        av, bv, iv = env["a"], env["b"], env["i"]
        want = {
            "if": min(av, bv), "and": av >= 1 and bv >= 1, "or": av == 1 or bv == 2, "not": av > bv,
            "implies": av != 1 or bv == 2, "max": max(av, bv, 3), "min": min(av, bv), "prod": av * bv * 2,
            "select": [av, bv, 7][iv], "distinct": len({av, bv, iv}) == 3, "divisible": av % bv == 0,
            "fdiv": av // 2, "cdiv": -(-av // bv), "divisor": bv,
        }
        assert {k: symint.value(e, env) for k, e in exprs.items()} == want, env


def test_mixing_with_z3_terms_raises():
    a = symint.var("a")
    with pytest.raises(TypeError, match="integer operands"):
        a + z3.Int("z")
    with pytest.raises(Exception):
        z3.And(a >= 1, a <= 3)
    with pytest.raises(TypeError, match="integer operands"):
        a * 2.5


def test_predicates_pass_for_z3_predicates_where_code_checks_isinstance():
    p = symint.var("a") >= 1
    assert isinstance(p, Pred) and isinstance(p, z3.BoolRef) and arith.is_sym(p)
    assert symint.value(arith.And(p, ~(p & (symint.var("a") > 3))), {"a": 2}) is True
