"""Value ranges (nnfuzz/abstract/ranges.py) and the built-in rules (nnfuzz/ops/<family>/ranges.py, domains on the specs):
the unary rules are sound against the torch lowerings, the infeasible examples are infeasible, the
feasible ones are not, and the generator never builds a graph the analysis rejects."""
import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nnfuzz.abstract import arith
from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.ops.binary import spec as B
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.ops.layout import spec as L
from nnfuzz.ops.norm import spec as N
from nnfuzz.ops.reduce import spec as R
from nnfuzz.ops.select import spec as S
from nnfuzz.ops.tfonly import spec as T
from nnfuzz.abstract.ranges import (INF, RANGE_RULES, SAME_INPUTS, UNKNOWN, Domain, VRange, _load,
                                    for_dtype, infeasible, propagate)
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.generate import generate_graph
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.materialize.torch.lowering import lowering_for, run_op

_load()
F32, F64 = DType.float32, DType.float64


# ---- (a) soundness of the unary rules against the torch lowerings ----------------------------
def _instances(cls):
    keys = list(cls.attr_choices)
    for combo in itertools.product(*(cls.attr_choices[k] for k in keys)):
        yield cls(**dict(zip(keys, combo)))


UNARY_CLASSES = sorted(
    (c for c in vars(E).values() if isinstance(c, type) and issubclass(c, AbsOpBase) and not c._abstract
     and c in RANGE_RULES and lowering_for(c) is not None),
    key=lambda c: c.__name__)
UNARY = [op for cls in UNARY_CLASSES for op in _instances(cls)] + list(_instances(S.Clip))


def _id(op):
    attrs = ",".join(f"{k}={getattr(op, k)}" for k in type(op).attr_choices)
    return f"{op.name}({attrs})" if attrs else op.name


UNARY_PARAMS = [pytest.param(op, id=_id(op)) for op in UNARY]

# log-sigmoid rounds to 0 in its saturated tail, which the rule deliberately treats as unreachable
# (see test_logsigmoid_tail_is_deliberately_excluded), so its drawn values stay below 600
CAP = {"LogSigmoid": 600.0}


def test_unary_ops_are_collected():
    names = {op.name for op in UNARY}
    assert len(UNARY_CLASSES) >= 40
    assert {"Relu", "Log", "Sqrt", "Asin", "Mish", "Reciprocal", "Square", "Clip", "IsNan"} <= names
    assert "Tan" not in names  # no rule: nothing to check


def _in_domain(op, x: float) -> bool:
    for index, dom in type(op).domains.items():
        if index != 0:
            continue
        if dom.nonzero and x == 0:
            return False
        if x < dom.lo or (dom.lo_open and x == dom.lo) or x > dom.hi or (dom.hi_open and x == dom.hi):
            return False
    return True


def _le(y, bound):
    return y <= bound + 1e-9 * abs(bound) if math.isfinite(bound) else y <= bound


def _ge(y, bound):
    return y >= bound - 1e-9 * abs(bound) if math.isfinite(bound) else y >= bound


FINITE = st.one_of(st.floats(-8.0, 8.0), st.floats(-1e6, 1e6), st.floats(-1e300, 1e300))


@st.composite
def ranged_values(draw):
    """(claimed VRange, values): the values satisfy every fact the range claims."""
    a, b = draw(FINITE), draw(FINITE)
    lo, hi = min(a, b), max(a, b)
    vals = [lo, hi] + draw(st.lists(st.floats(lo, hi), max_size=6))  # the bounds are tight
    zero = lo <= 0.0 <= hi and draw(st.booleans())
    if zero:
        vals.append(0.0)
    claim_lo = -INF if draw(st.integers(0, 3)) == 0 else lo
    claim_hi = INF if draw(st.integers(0, 3)) == 0 else hi
    min_ub = draw(st.sampled_from(vals + [INF]))   # some element equals it
    max_lb = draw(st.sampled_from(vals + [-INF]))
    return (claim_lo, claim_hi, min_ub, max_lb, zero), vals


# covers the minimum of every non-monotonic activation, and both signs
EDGE = ((-3.0, 3.0, -1.5, 2.0, True),
        [-3.0, 3.0, -1.5, -1.278465, -1.192431, -0.7524615, -0.751792, -0.5, 0.0, 0.5, 1.0, 2.0])


@pytest.mark.parametrize("op", UNARY_PARAMS)
@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(case=ranged_values())
@example(case=EDGE)
def test_unary_rule_is_sound(op, case):
    facts, vals = case
    cap = CAP.get(op.name)
    if cap is not None:  # a monotone map of everything keeps every fact true
        facts, vals = tuple(f if isinstance(f, bool) else min(f, cap) for f in facts), [min(v, cap) for v in vals]
    r = VRange(*facts)
    n = len(vals)
    out = propagate(op, [r], [AbsTensor([n], F64)], 1)[0]
    assert out.lo <= out.hi
    y = run_op(op, torch.tensor(vals, dtype=torch.float64))[0].double().numpy()
    inside = np.array([_in_domain(op, v) for v in vals])
    if infeasible(op, [r]) is not None:
        assert not inside.all(), f"{op.name} called infeasible on {r}, but {vals} all lie in its domain"
    for x, v, ok in zip(vals, y, inside):
        if ok and np.isfinite(v):
            assert _ge(v, out.lo) and _le(v, out.hi), f"{op.name}({x!r}) = {v!r} outside [{out.lo}, {out.hi}] ({r})"
    if inside.all():  # a defined result: the "some element" facts must hold
        assert any(_le(v, out.min_ub) for v in y), f"no {op.name} output <= min_ub {out.min_ub}: {y} ({r})"
        assert any(_ge(v, out.max_lb) for v in y), f"no {op.name} output >= max_lb {out.max_lb}: {y} ({r})"
        if out.zero:
            assert (y == 0).any(), f"no {op.name} output is 0: {y} ({r})"




# the TF-only binary ops: x (a column) and y (a row) broadcast, so every pair of values meets
TF_BINARY = [pytest.param(cls(), id=cls.name) for cls in (T.SquaredDifference, T.FloorMod, T.DivNoNan)]


@pytest.mark.parametrize("op", TF_BINARY)
@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(a=ranged_values(), b=ranged_values())
@example(a=EDGE, b=EDGE)
def test_tf_binary_rule_is_sound(op, a, b):
    (fa, xs), (fb, ys) = a, b
    ra, rb = VRange(*fa), VRange(*fb)
    out = propagate(op, [ra, rb], [AbsTensor([len(xs), 1], F64), AbsTensor([len(ys)], F64)], 1)[0]
    assert out.lo <= out.hi
    z = run_op(op, torch.tensor(xs, dtype=torch.float64)[:, None], torch.tensor(ys, dtype=torch.float64))[0]
    z = z.numpy()
    y_ok = np.array([all(not (d.nonzero and v == 0) for i, d in type(op).domains.items() if i == 1) for v in ys])
    if infeasible(op, [ra, rb]) is not None:
        assert not y_ok.all(), f"{op.name} called infeasible on {ra}, {rb}, but {ys} all lie in its domain"
    for v in z[:, y_ok][np.isfinite(z[:, y_ok])]:
        assert _ge(v, out.lo) and _le(v, out.hi), f"{op.name} gave {v!r} outside [{out.lo}, {out.hi}] ({ra}, {rb})"
    if y_ok.all() and np.isfinite(z).all():  # a defined result: the "some element" facts must hold
        assert (z <= out.min_ub).any() and (z >= out.max_lb).any(), f"{op.name}: {z} vs {out} ({ra}, {rb})"
        if out.zero:
            assert (z == 0).any(), f"no {op.name} output is 0: {z} ({ra}, {rb})"


def test_tf_binary_same_inputs():
    assert SAME_INPUTS.get(T.SquaredDifference) == SAME_INPUTS.get(T.FloorMod) == VRange(0.0, 0.0, 0.0, 0.0, True)
    assert SAME_INPUTS.get(T.DivNoNan) is None  # x / x is 1, but 0 where x is 0
    x = torch.tensor([-1e30, -3.5, -1e-30, 1e-30, 0.1, 7.0, 3e38], dtype=torch.float32)
    for cls in (T.SquaredDifference, T.FloorMod):
        assert (run_op(cls(), x, x)[0] == 0).all()


@pytest.mark.parametrize("op,r,x", [
    pytest.param(E.Selu(), VRange(2.0, 2.0, 2.0, 2.0), 2.0,
                 id="selu-positive"),
    pytest.param(E.Selu(), VRange(-1.0, -1.0, -1.0, -1.0), -1.0, id="selu-negative"),
    pytest.param(E.Gelu(approximate="none"), UNKNOWN, -0.751792, id="gelu-min"),
    pytest.param(E.Gelu(approximate="tanh"), UNKNOWN, -0.7524615, id="gelu-tanh-min"),
    pytest.param(E.Mish(), UNKNOWN, -1.192431,
                 id="mish-min"),
    pytest.param(E.Silu(), UNKNOWN, -1.278465, id="silu-min"),
    pytest.param(E.HardSwish(), UNKNOWN, -1.5, id="hardswish-min"),
    pytest.param(E.Elu(alpha=2.0), UNKNOWN, -700.0, id="elu-alpha2-saturated"),
    pytest.param(E.Sigmoid(), VRange(-1.0, 3.0), 3.0, id="sigmoid-hi"),
])
def test_rule_bound_at_point(op, r, x):
    out = propagate(op, [r], [AbsTensor([1], F64)], 1)[0]
    y = float(run_op(op, torch.tensor([x], dtype=torch.float64))[0])
    assert _ge(y, out.lo) and _le(y, out.hi), f"{op.name}({x}) = {y!r} outside [{out.lo!r}, {out.hi!r}]"


@pytest.mark.parametrize("dtype,x", [(torch.float64, 800.0), (torch.float32, 110.0)])
def test_logsigmoid_tail_is_deliberately_excluded(dtype, x):
    """logsigmoid(x) rounds to 0 only in its saturated tail; the rule's hi stays below 0 on purpose
    (value_ranges.py says why), so sqrt(logsigmoid(x)) counts as impossible."""
    out = propagate(E.LogSigmoid(), [UNKNOWN], [AbsTensor([1], F32)], 1)[0]
    y = float(run_op(E.LogSigmoid(), torch.tensor([x], dtype=dtype))[0])
    assert y == 0.0 and out.hi < 0.0
    assert infeasible(E.Sqrt(), [out]) is not None


def test_domain_violated_by():
    pos = Domain(lo=0.0, lo_open=True)
    assert pos.violated_by(VRange(-2.0, 0.0)) is not None       # every element <= 0
    assert pos.violated_by(VRange(-2.0, 1.0)) is None
    assert pos.violated_by(VRange(-2.0, 1.0, min_ub=-1.0)) is not None  # some element <= -1
    assert pos.violated_by(VRange(0.0, 1.0, zero=True)) is not None
    assert Domain(lo=0.0).violated_by(VRange(0.0, 1.0, zero=True)) is None  # sqrt(0) is fine
    unit = Domain(lo=-1.0, hi=1.0)
    assert unit.violated_by(VRange(-5.0, 5.0, max_lb=1.5)) is not None
    assert unit.violated_by(VRange(-5.0, 5.0, max_lb=1.0)) is None
    nz = Domain(nonzero=True)
    assert nz.violated_by(VRange(0.0, 0.0)) is not None
    assert nz.violated_by(VRange(-1.0, 1.0)) is None


# ---- (b) examples: infeasible and feasible ---------------------------------------------------
def _t(*shape):
    return AbsTensor(list(shape), F64)


def prop(op, rs, shapes, names=None):
    return propagate(op, rs, [_t(*s) for s in shapes], 1, names=names)[0]


def u(op, *xs):
    return run_op(op, *xs)[0]


def _softplus2(r):
    return prop(E.Softplus(), [prop(E.Softplus(), [r], [(6,)])], [(6,)])


# name -> (the last op's infeasible() answer, the graph on a float64 tensor, the input shape)
INFEASIBLE = {
    "log(logsigmoid(x))": (
        lambda: infeasible(E.Log(), [prop(E.LogSigmoid(), [UNKNOWN], [(6,)])]),
        lambda x: u(E.Log(), u(E.LogSigmoid(), x)), (6,)),
    "sqrt(min(logsigmoid(x)))": (
        lambda: infeasible(E.Sqrt(), [prop(R.ReduceMin(1, keepdims=False),
                                            [prop(E.LogSigmoid(), [UNKNOWN], [(3, 4)])], [(3, 4)])]),
        lambda x: u(E.Sqrt(), u(R.ReduceMin(1, keepdims=False), u(E.LogSigmoid(), x))), (3, 4)),
    "rsqrt(layernorm(x))": (
        lambda: infeasible(E.Rsqrt(), [prop(N.LayerNorm(k=1, affine=False, eps=1e-5), [UNKNOWN], [(5,)])]),
        lambda x: u(E.Rsqrt(), u(N.LayerNorm(k=1, affine=False, eps=1e-5), x)), (5,)),
    "rsqrt(min(layernorm(x)))": (
        lambda: infeasible(E.Rsqrt(), [prop(R.ReduceMin(1, keepdims=True), [
            prop(N.LayerNorm(k=1, affine=False, eps=1e-5), [UNKNOWN], [(2, 5)])], [(2, 5)])]),
        lambda x: u(E.Rsqrt(), u(R.ReduceMin(1, keepdims=True), u(N.LayerNorm(k=1, affine=False, eps=1e-5), x))),
        (2, 5)),
    "rsqrt(layernorm over one element)": (
        lambda: infeasible(E.Rsqrt(), [prop(N.LayerNorm(k=1, affine=False, eps=1e-5), [UNKNOWN], [(3, 1)])]),
        lambda x: u(E.Rsqrt(), u(N.LayerNorm(k=1, affine=False, eps=1e-5), x)), (3, 1)),
    "log2(tril(x))": (
        lambda: infeasible(E.Log2(), [prop(L.Tril(0), [UNKNOWN], [(4, 4)])]),
        lambda x: u(E.Log2(), u(L.Tril(0), x)), (4, 4)),
    "y / (x - x)": (
        lambda: infeasible(B.Div(), [UNKNOWN, prop(B.Sub(), [UNKNOWN, UNKNOWN], [(3,), (3,)], names=["a", "a"])]),
        lambda x: u(B.Div(), x, u(B.Sub(), x, x)), (3,)),
    "fmod(y, x - x)": (
        lambda: infeasible(B.Fmod(), [UNKNOWN, prop(B.Sub(), [UNKNOWN, UNKNOWN], [(3,), (3,)], names=["a", "a"])]),
        lambda x: u(B.Fmod(), x, u(B.Sub(), x, x)), (3,)),
    "floormod(y, x - x)": (
        lambda: infeasible(T.FloorMod(), [UNKNOWN, prop(B.Sub(), [UNKNOWN, UNKNOWN], [(3,), (3,)], names=["a", "a"])]),
        lambda x: u(T.FloorMod(), x, u(B.Sub(), x, x)), (3,)),
    "reciprocal(x - x)": (
        lambda: infeasible(E.Reciprocal(), [prop(B.Sub(), [UNKNOWN, UNKNOWN], [(3,), (3,)], names=["a", "a"])]),
        lambda x: u(E.Reciprocal(), u(B.Sub(), x, x)), (3,)),
    "log1p(logsoftmax(x)) over 21": (
        lambda: infeasible(E.Log1p(), [prop(R.LogSoftmax(0), [UNKNOWN], [(21,)])]),
        lambda x: u(E.Log1p(), u(R.LogSoftmax(0), x)), (21,)),
    "asin(logsoftmax(x)) over 3": (
        lambda: infeasible(E.Asin(), [prop(R.LogSoftmax(1), [UNKNOWN], [(2, 3)])]),
        lambda x: u(E.Asin(), u(R.LogSoftmax(1), x)), (2, 3)),
    "log(-exp(x))": (
        lambda: infeasible(E.Log(), [prop(E.Neg(), [prop(E.Exp(), [UNKNOWN], [(6,)])], [(6,)])]),
        lambda x: u(E.Log(), u(E.Neg(), u(E.Exp(), x))), (6,)),
    "rsqrt(relu(-exp(x)))": (
        lambda: infeasible(E.Rsqrt(), [prop(E.Relu(), [prop(E.Neg(), [prop(E.Exp(), [UNKNOWN], [(6,)])], [(6,)])],
                                            [(6,)])]),
        lambda x: u(E.Rsqrt(), u(E.Relu(), u(E.Neg(), u(E.Exp(), x)))), (6,)),
    "sqrt(-softplus(softplus(x)))": (  # softplus(softplus(x)) > log 2
        lambda: infeasible(E.Sqrt(), [prop(E.Neg(), [_softplus2(UNKNOWN)], [(6,)])]),
        lambda x: u(E.Sqrt(), u(E.Neg(), u(E.Softplus(), u(E.Softplus(), x)))), (6,)),
    "asin(softplus(softplus(x)) + softplus(softplus(x)))": (  # > 2 log 2 > 1
        lambda: infeasible(E.Asin(), [prop(B.Add(), [_softplus2(UNKNOWN), _softplus2(UNKNOWN)], [(6,), (6,)])]),
        lambda x: u(E.Asin(), u(B.Add(), u(E.Softplus(), u(E.Softplus(), x)),
                                  u(E.Softplus(), u(E.Softplus(), x.flip(0))))), (6,)),
    "pow(logsigmoid(x), y)": (
        lambda: infeasible(B.Pow(), [prop(E.LogSigmoid(), [UNKNOWN], [(6,)]), UNKNOWN]),
        lambda x: u(B.Pow(), u(E.LogSigmoid(), x), torch.full_like(x, 0.5)), (6,)),
}


@pytest.mark.parametrize("name", list(INFEASIBLE))
def test_infeasible_examples(name):
    why, graph, shape = INFEASIBLE[name]
    assert why() is not None
    gen = torch.Generator().manual_seed(7)
    for scale in (0.1, 1.0, 10.0, 100.0):  # the graph's result is undefined wherever we look
        x = torch.randn(*shape, generator=gen, dtype=torch.float64) * scale
        assert not torch.isfinite(graph(x)).all(), (name, x)


# name -> (infeasible() answer, the graph, an input where it is finite)
W6 = torch.tensor([0.5, -1.0, 2.0, 0.1, -0.3, 1.5], dtype=torch.float64)
FEASIBLE = {
    "log(exp(x))": (lambda: infeasible(E.Log(), [prop(E.Exp(), [UNKNOWN], [(6,)])]),
                    lambda x: u(E.Log(), u(E.Exp(), x)), W6),
    "sqrt(relu(x))": (lambda: infeasible(E.Sqrt(), [prop(E.Relu(), [UNKNOWN], [(6,)])]),
                      lambda x: u(E.Sqrt(), u(E.Relu(), x)), W6),
    "acos(sigmoid(x))": (lambda: infeasible(E.Acos(), [prop(E.Sigmoid(), [UNKNOWN], [(6,)])]),
                         lambda x: u(E.Acos(), u(E.Sigmoid(), x)), W6),
    "log(sigmoid(x))": (lambda: infeasible(E.Log(), [prop(E.Sigmoid(), [UNKNOWN], [(6,)])]),
                        lambda x: u(E.Log(), u(E.Sigmoid(), x)), W6),
    "rsqrt(softplus(x))": (lambda: infeasible(E.Rsqrt(), [prop(E.Softplus(), [UNKNOWN], [(6,)])]),
                           lambda x: u(E.Rsqrt(), u(E.Softplus(), x)), W6),
    "asin(softplus(softplus(x)))": (lambda: infeasible(E.Asin(), [_softplus2(UNKNOWN)]),
                                    lambda x: u(E.Asin(), u(E.Softplus(), u(E.Softplus(), x))), W6 - 10),
    "sqrt(-exp(x))": (  # exp underflows to 0 and sqrt(-0.0) is -0.0
        lambda: infeasible(E.Sqrt(), [prop(E.Neg(), [prop(E.Exp(), [UNKNOWN], [(6,)])], [(6,)])]),
        lambda x: u(E.Sqrt(), u(E.Neg(), u(E.Exp(), x))), torch.full((6,), -1000.0, dtype=torch.float64)),
    "log1p(logsoftmax(x)) over 2": (lambda: infeasible(E.Log1p(), [prop(R.LogSoftmax(0), [UNKNOWN], [(2,)])]),
                                    lambda x: u(E.Log1p(), u(R.LogSoftmax(0), x)),
                                    torch.zeros(2, dtype=torch.float64)),
    "asin(logsoftmax(x)) over 2": (lambda: infeasible(E.Asin(), [prop(R.LogSoftmax(0), [UNKNOWN], [(2,)])]),
                                   lambda x: u(E.Asin(), u(R.LogSoftmax(0), x)),
                                   torch.zeros(2, dtype=torch.float64)),
    "log2(triu(x, -3)) on 4x4": (lambda: infeasible(E.Log2(), [prop(L.Triu(-3), [UNKNOWN], [(4, 4)])]),
                                 lambda x: u(E.Log2(), u(L.Triu(-3), x)), torch.ones(4, 4, dtype=torch.float64)),
    "log2(tril(x, 3)) on 4x4": (lambda: infeasible(E.Log2(), [prop(L.Tril(3), [UNKNOWN], [(4, 4)])]),
                                lambda x: u(E.Log2(), u(L.Tril(3), x)), torch.ones(4, 4, dtype=torch.float64)),
    "x / (x - y)": (lambda: infeasible(B.Div(), [UNKNOWN, prop(B.Sub(), [UNKNOWN, UNKNOWN], [(6,), (6,)],
                                                                names=["a", "b"])]),
                    lambda x: u(B.Div(), x, u(B.Sub(), x, x.flip(0))), W6),
    "rsqrt(affine layernorm(x))": (
        lambda: infeasible(E.Rsqrt(), [propagate(N.LayerNorm(k=1, affine=True, eps=1e-5), [UNKNOWN] * 3,
                                                 [_t(5), _t(5), _t(5)], 1)[0]]),
        lambda x: u(E.Rsqrt(), u(N.LayerNorm(k=1, affine=True, eps=1e-5), x, torch.zeros(5, dtype=torch.float64),
                                  torch.full((5,), 10.0, dtype=torch.float64))),
        torch.arange(5, dtype=torch.float64)),
}


@pytest.mark.parametrize("name", list(FEASIBLE))
def test_feasible_examples(name):
    why, graph, witness = FEASIBLE[name]
    assert why() is None
    assert torch.isfinite(graph(witness)).all()  # the witness shows values exist


def test_same_input_rules_need_one_tensor():
    r = VRange(1.0, 2.0)
    assert prop(B.Sub(), [r, r], [(3,), (3,)], names=["a", "a"]).zero
    assert not prop(B.Sub(), [r, r], [(3,), (3,)], names=["a", "b"]).zero
    assert prop(B.Div(), [UNKNOWN, UNKNOWN], [(3,), (3,)], names=["a", "a"]) == VRange(1.0, 1.0, 1.0, 1.0)


def test_for_dtype():
    assert for_dtype(DType.bool) == VRange(0.0, 1.0)
    assert for_dtype(F32) == UNKNOWN and for_dtype(DType.int8) == UNKNOWN


# ---- (c) the generator never builds a graph the analysis rejects -----------------------------
SEEDS = range(150)


def _first_infeasible(gir):
    """Re-run the range analysis over a finished graph, as the generator does (an empty tensor's
    range is unknown: none of its "some element" facts hold)."""
    ranges = {v: for_dtype(gir.vars[v].dtype) for v in gir.inputs + gir.weights}
    for inst in gir.insts:
        ts = [gir.vars[v] for v in inst.inputs]
        rs = [ranges[v] if arith.prod([int(d) for d in t.shape]) else UNKNOWN for v, t in zip(inst.inputs, ts)]
        why = infeasible(inst.op, rs)
        if why:
            return why
        ranges.update(zip(inst.outputs, propagate(inst.op, rs, ts, len(inst.outputs), inst.inputs)))
    return None


@pytest.fixture(scope="module")
def graphs():
    return {vr: [generate_graph(GenPolicy(seed=s, max_nodes=10, value_ranges=vr)) for s in SEEDS]
            for vr in (True, False)}


def test_generated_graphs_are_never_infeasible(graphs):
    bad = [(s, why) for s, g in zip(SEEDS, graphs[True]) if (why := _first_infeasible(g))]
    assert not bad, bad
    # not vacuous: the graphs do hold ops with a domain
    assert sum(bool(i.op.domains) for g in graphs[True] for i in g.insts) >= 20


def test_without_value_ranges_some_graph_is_infeasible(graphs):
    bad = [s for s, g in zip(SEEDS, graphs[False]) if _first_infeasible(g)]
    assert bad, "no seed produced an infeasible graph without value_ranges: the check would be vacuous"
