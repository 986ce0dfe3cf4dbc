"""The propagation solver (nnfuzz.generate.propagate / instantiate) on constraint sets with known answers,
and the generator's use of it: Z3 only as a fallback, and for operators that call z3 themselves."""
import random

import pytest
import z3

from nnfuzz.abstract import arith, symint
from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import OP_REGISTRY, UnaryOpBase
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import OpDefinitionError
from nnfuzz.generate import instantiate
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.generate.propagate import Network
from nnfuzz.generate.symbolic import GraphGenerator

F32 = DType.float32


def _solve(names, build, seed=0, kinds=None):
    """Solve ``build(*vars)`` (a list of predicates) with every variable an attribute."""
    vs = [symint.var(n) for n in names]
    cons = [c for c in build(*vs) if c is not True]
    kinds = kinds or ["size"] * len(names)
    prob = instantiate.Problem(names, kinds, [], [], vs, cons)
    got = instantiate.solve(prob, random.Random(seed), 5, 4096)
    return got if got in (None, "unsat") else dict(zip(names, got[0]))


def test_conv_output_size():
    def rules(k, s, p, d):
        out = (16 + 2 * p - d * (k - 1) - 1) // s + 1
        return [k >= 1, s >= 1, p >= 0, d >= 1, out == 5]

    seen = set()
    for seed in range(30):
        v = _solve(["k", "s", "p", "d"], rules, seed, ["size", "size", "pad", "size"])
        assert v is not None and v != "unsat"
        assert (16 + 2 * v["p"] - v["d"] * (v["k"] - 1) - 1) // v["s"] + 1 == 5 and min(v.values()) >= 0
        seen.add(tuple(v.values()))
    assert len(seen) > 10  # sampled, not one favourite answer


def test_reshape_product_equality_draws_among_divisors():
    sols = set()
    for seed in range(30):
        v = _solve(["a", "b", "c"], lambda a, b, c: [a >= 1, b >= 1, c >= 1, a * b * c == 24], seed)
        assert v["a"] * v["b"] * v["c"] == 24
        sols.add((v["a"], v["b"], v["c"]))
    assert len(sols) > 5


def test_divisibility():
    for seed in range(20):
        v = _solve(["g", "n"], lambda g, n: [n == 12, arith.divisible(n, g), g >= 2], seed)
        assert v["n"] == 12 and v["g"] in (2, 3, 4, 6, 12)


def test_contradictions_are_proved_without_search():
    assert _solve(["k"], lambda k: [k >= 5, k <= 2]) == "unsat"
    assert _solve(["x"], lambda x: [x * 2 == 7]) == "unsat"
    x = symint.var("x")
    net = Network([x >= 1, x * x <= 3, x % 2 == 0], [x], [(-100, 100)])
    assert not net.propagate()


def test_propagation_narrows_to_the_exact_range():
    a, b = symint.var("a"), symint.var("b")
    net = Network([a + b == 10, b >= 3, 2 * a >= 7], [a, b], [(-100, 100), (-100, 100)])
    assert net.propagate()
    assert net.domain(0) == (4, 7) and net.domain(1) == (3, 6)
    assert net.assign(1, 5) and net.domain(0) == (5, 5) and net.solved()
    i = symint.var("i")
    net = Network([arith.select([3, 8, 5], i) == 8], [i], [(-100, 100)])
    assert net.propagate() and net.domain(0) == (1, 1)  # the If chain's other branches cannot give 8


def _unary(name, requires, transfer, kinds=None):
    """A one-attribute unary test op ``name(d)`` over rank-1 float32 tensors."""
    cls = type(name, (UnaryOpBase,), {
        "inp_dtypes": [(F32,)], "out_dtypes": [(F32,)], "inp_ranks": [(1,)], "out_ranks": [(1,)],
        "attr_kinds": kinds or {"d": "size"}, "__init__": lambda self, d: setattr(self, "d", d),
        "requires": lambda self, inputs: requires(self, inputs[0]),
        "type_infer": lambda self, inputs: [AbsTensor([transfer(self, inputs[0])], F32)],
    })
    return cls


def test_an_op_written_with_z3_calls_is_posed_to_z3():
    def requires(self, x):  # as a user may write it: z3 calls on symbolic values, plain Python on ints
        return [z3.And(self.d >= 2, self.d <= 4)] if arith.is_sym(self.d) else [2 <= self.d <= 4]

    cls = _unary("TestZ3Calls", requires, lambda self, x: x.shape[0] * self.d)
    try:
        g = GraphGenerator(GenPolicy(seed=0, dtypes=["float32"], max_nodes=4, guesses=0), [cls])
        gir = g.generate()
        assert cls in g._z3_only and g.stats["z3_hits"] >= 1 and g.stats["prop_hits"] == 0
        assert all(2 <= inst.op.attrs["d"] <= 4 for inst in gir.insts)
    finally:
        del OP_REGISTRY["TestZ3Calls"]


def test_builtin_ops_never_need_z3_by_themselves():
    from nnfuzz.generate.opset import select_ops

    p = GenPolicy(max_nodes=10)
    ops = select_ops(p)
    for seed in range(15):
        g = GraphGenerator(GenPolicy(**{**p.to_dict(), "seed": seed}), ops)
        g.generate()
        assert not g._z3_only, seed
        assert g.stats["prop_hits"] + g.stats["guess_hits"] >= len(g.insts) - g.stats["z3_hits"]


def test_symbolic_and_concrete_rules_disagreeing_is_the_ops_fault_on_the_propagation_path_too():
    cls = _unary("TestNegDivProp", lambda self, x: [self.d <= -2, self.d >= -3],
                 lambda self, x: x.shape[0] % self.d + 1, {"d": "any"})
    try:
        with pytest.raises(OpDefinitionError, match=r"TestNegDivProp: propagation and sampling found attributes "
                                                     r"\{'d': -\d\}.*divisor that requires keeps >= 1"):
            GraphGenerator(GenPolicy(seed=0, dtypes=["float32"], max_nodes=3, guesses=0), [cls]).generate()
    finally:
        del OP_REGISTRY["TestNegDivProp"]
