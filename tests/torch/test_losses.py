"""Domain losses (nnfuzz/materialize/torch/losses.py, derived from the specs' domains, plus the ones
registered in nnfuzz/ops/<family>/search.py): zero on safe inputs, positive on unsafe ones, and a
gradient that moves unsafe inputs towards the safe region."""
import math

import pytest
import torch

from nnfuzz.abstract import AbsOpBase, AbsTensor, load_builtin_ops
from nnfuzz.abstract.domain import Domain
from nnfuzz.abstract.dtype import DType
from nnfuzz.ops.binary import spec as B
from nnfuzz.ops.bitwise import spec as K
from nnfuzz.ops.normalize import spec as M
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.ops.select import spec as S
from nnfuzz.ops.tfonly import spec as T
from nnfuzz.materialize.torch.losses import away_from_zero, int_overflow, loss_for, magnitude_loss

F16, F32, F64 = DType.float16, DType.float32, DType.float64
I8, I32, U8 = DType.int8, DType.int32, DType.uint8


def case(op, safe, unsafe, dtypes, name, lr=1e-2):
    """``safe``/``unsafe``: one list of values per input; ``lr``: the gradient step's size (near the
    float32 limit a step of 1e-2 is below float64's resolution, so those cases take a 1% step)."""
    return pytest.param(op, safe, unsafe, dtypes, lr, id=name)


# op class -> its cases: (op instance, safe inputs, unsafe inputs, input dtypes)
CASES = {
    E.Log: [case(E.Log(), [[0.5, 1.0, 100.0]], [[-1.0]], [F32], "log-negative"),
            case(E.Log(), [[0.5]], [[0.0]], [F32], "log-zero")],
    E.Log2: [case(E.Log2(), [[2.0, 1e-2]], [[-3.0, 4.0]], [F32], "log2-negative")],
    E.Rsqrt: [case(E.Rsqrt(), [[4.0, 0.25]], [[0.0]], [F32], "rsqrt-zero"),
              case(E.Rsqrt(), [[4.0]], [[-2.0]], [F16], "rsqrt-negative-f16")],
    E.Log1p: [case(E.Log1p(), [[-0.5, 0.0, 3.0]], [[-1.0]], [F32], "log1p-minus-one"),
              case(E.Log1p(), [[0.0]], [[-5.0]], [F64], "log1p-below")],
    E.Sqrt: [case(E.Sqrt(), [[0.0, 2.0]], [[-1.0]], [F32], "sqrt-negative")],
    E.Asin: [case(E.Asin(), [[-0.5, 0.0, 0.9]], [[2.0]], [F32], "asin-two"),
             case(E.Asin(), [[0.9]], [[-2.0]], [F32], "asin-minus-two")],
    E.Acos: [case(E.Acos(), [[-0.9, 0.5]], [[1.5]], [F32], "acos-above-one")],
    E.Exp: [case(E.Exp(), [[-100.0, 0.0, 50.0]], [[1000.0]], [F32], "exp-1000-f32"),
            case(E.Exp(), [[5.0]], [[20.0]], [F16], "exp-20-f16")],
    E.Softplus: [case(E.Softplus(), [[-5.0, 30.0]], [[200.0]], [F32], "softplus-200-f32"),
                 case(E.Softplus(), [[5.0]], [[20.0]], [F16], "softplus-20-f16")],
    E.Mish: [case(E.Mish(), [[-5.0, 3.0]], [[1000.0]], [F32], "mish-1000-f32"),
             case(E.Mish(), [[3.0]], [[20.0]], [F16], "mish-20-f16")],
    E.Tan: [case(E.Tan(), [[0.0, 1.0, -1.0]], [[math.pi / 2]], [F32], "tan-pole"),
            case(E.Tan(), [[3.0]], [[-math.pi / 2]], [F32], "tan-negative-pole")],
    E.Square: [case(E.Square(), [[-3.0, 100.0]], [[300.0]], [F16], "square-300-f16"),
               case(E.Square(), [[1e10]], [[1e20]], [F32], "square-1e20-f32", lr=1e18)],
    E.Reciprocal: [case(E.Reciprocal(), [[-2.0, 0.5]], [[0.0]], [F32], "reciprocal-zero"),
                   case(E.Reciprocal(), [[0.5]], [[-1e-5]], [F32], "reciprocal-tiny-negative")],
    B.Div: [case(B.Div(), [[1.0, -3.0], [2.0, -0.5]], [[1.0], [0.0]], [F32, F32], "div-by-zero"),
            case(B.Div(), [[1.0], [0.5]], [[1.0], [1e-4]], [F16, F16], "div-by-tiny-f16")],
    B.Fmod: [case(B.Fmod(), [[5.0], [3.0]], [[5.0], [0.0]], [F32, F32], "fmod-by-zero")],
    T.FloorMod: [case(T.FloorMod(), [[-5.0], [-3.0]], [[-5.0], [0.0]], [F32, F32], "floormod-by-zero"),
                 case(T.FloorMod(), [[5.0], [0.5]], [[5.0], [-1e-3]], [F16, F16], "floormod-by-tiny-f16")],
    T.DivNoNan: [case(T.DivNoNan(), [[1.0, 2.0], [0.0, 0.5]], [[1.0], [1e-30]], [F32, F32], "divnonan-by-subnormal")],
    B.Pow: [case(B.Pow(), [[2.0, 0.5], [3.0, -1.0]], [[-2.0], [0.5]], [F32, F32], "pow-negative-base"),
            case(B.Pow(), [[10.0], [2.0]], [[10.0], [1000.0]], [F32, F32], "pow-overflow")],
    S.Cast: [case(S.Cast(to=I8), [[-100.0, 0.0, 100.0]], [[1e6]], [F32], "cast-1e6-to-int8"),
             case(S.Cast(to=U8), [[0.0, 200.0]], [[-3.0]], [F32], "cast-minus3-to-uint8"),
             case(S.Cast(to=I8), [[-128.0, 0.0, 127.0]], [[300.0]], [I32], "cast-int32-300-to-int8"),
             case(S.Cast(to=F16), [[1e4]], [[1e5]], [F64], "cast-f64-1e5-to-f16"),
             case(S.Cast(to=F32), [[1e30]], [[1e39]], [F64], "cast-f64-1e39-to-f32", lr=1e37)],
    K.BitShift: [case(K.BitShift(direction="LEFT"), [[1.0, 3.0], [0.0, 7.0]], [[1.0], [9.0]], [U8, U8],
                      "bitshift-by-9")],
    K.IntDiv: [case(K.IntDiv(), [[7.0, -7.0], [2.0, -3.0]], [[7.0], [0.0]], [I32, I32], "intdiv-by-zero")],
    K.Mod: [case(K.Mod(), [[7.0, -7.0], [2.0, -3.0]], [[7.0], [0.0]], [I32, I32], "mod-by-zero")],
    K.IntPow: [case(K.IntPow(), [[2.0, -3.0], [0.0, 3.0]], [[2.0], [5.0]], [I32, I32], "intpow-exponent-5")],
    M.LpNormalization: [case(M.LpNormalization(0, p=2), [[1.0, 2.0]], [[1e-4, -1e-4]], [F32], "lpnorm-tiny-slice")],
    M.MeanVarianceNormalization: [case(M.MeanVarianceNormalization(axes=(0,)), [[1.0, 2.0, 4.0]], [[1.0, 1.0001]],
                                       [F32], "mvn-nearly-constant")],
}

ALL = [p for ps in CASES.values() for p in ps]


def tensors(values, grad=False):
    return [torch.tensor(v, dtype=torch.float64, requires_grad=grad) for v in values]


def loss(op, xs, dtypes):
    fn = loss_for(type(op))
    assert fn is not None
    out = fn(op, xs, dtypes)
    assert out.dim() == 0
    return out


def test_every_registered_loss_is_covered():
    with_loss = {c for c in load_builtin_ops().values() if c.__module__.startswith("nnfuzz.ops.") and loss_for(c)}
    assert set(CASES) == with_loss, "a domain loss without a test (or a test without a loss)"
    for cls, params in CASES.items():
        assert params and all(type(p.values[0]) is cls for p in params)


@pytest.mark.parametrize("op,safe,unsafe,dtypes,lr", ALL)
def test_zero_on_safe_inputs(op, safe, unsafe, dtypes, lr):
    assert float(loss(op, tensors(safe), dtypes)) == 0.0


@pytest.mark.parametrize("op,safe,unsafe,dtypes,lr", ALL)
def test_positive_on_unsafe_inputs(op, safe, unsafe, dtypes, lr):
    assert float(loss(op, tensors(unsafe), dtypes)) > 0.0


@pytest.mark.parametrize("op,safe,unsafe,dtypes,lr", ALL)
def test_gradient_step_lowers_the_loss(op, safe, unsafe, dtypes, lr):
    xs = tensors(unsafe, grad=True)
    before = loss(op, xs, dtypes)
    grads = torch.autograd.grad(before, xs, allow_unused=True)
    grads = [torch.zeros_like(x) if g is None else g for x, g in zip(xs, grads)]
    assert any(bool((g != 0).any()) for g in grads), "no gradient on an unsafe input"
    assert all(bool(torch.isfinite(g).all()) for g in grads)
    with torch.no_grad():
        stepped = [x - lr * g for x, g in zip(xs, grads)]
        after = loss(op, stepped, dtypes)
    assert float(after) < float(before.detach())


@pytest.mark.parametrize("op", [E.Reciprocal(), B.Div(), B.Fmod(), T.FloorMod()], ids=lambda o: o.name)
@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_divisor_gradient_at_exactly_zero(op, zero):
    x = torch.tensor([zero], dtype=torch.float64, requires_grad=True)
    xs = [x] if isinstance(op, E.Reciprocal) else [torch.tensor([1.0], dtype=torch.float64), x]
    out = loss(op, xs, [F32] * len(xs))
    (g,) = torch.autograd.grad(out, [x])
    assert float(g) != 0.0  # |x| has no gradient at 0; away_from_zero picks +m
    with torch.no_grad():
        assert float(loss(op, xs[:-1] + [x - 1e-2 * g], [F32] * len(xs))) < float(out.detach())


def test_away_from_zero():
    m = 1e-3
    assert float(away_from_zero(torch.tensor([m, -m, 5.0, -5.0], dtype=torch.float64), m)) == 0.0
    for v in (0.0, m / 2, -m / 2):
        x = torch.tensor([v], dtype=torch.float64, requires_grad=True)
        out = away_from_zero(x, m)
        assert float(out.detach()) > 0.0
        (g,) = torch.autograd.grad(out, [x])
        # the step moves x away from 0 on its own side (0 itself goes to +m)
        assert float(-g) * (1.0 if v >= 0 else -1.0) > 0.0


def test_losses_sum_over_violating_elements_only():
    one = loss(E.Log(), tensors([[-1.0]]), [F32])
    two = loss(E.Log(), tensors([[-1.0, -1.0, 5.0]]), [F32])
    assert float(two) == pytest.approx(2 * float(one))


def test_square_of_integers_has_no_domain_loss():
    # integer overflow is checked on every integer op's exact result (int_overflow), not here
    assert float(loss(E.Square(), tensors([[1e6]]), [I32])) == 0.0


def test_widening_cast_has_no_loss():
    assert float(loss(S.Cast(to=F64), tensors([[1e300]]), [F32])) == 0.0
    assert float(loss(S.Cast(to=F32), tensors([[1e30]]), [F32])) == 0.0


def test_loss_for_walks_the_mro():
    class MyLog(E.Log):
        pass

    xs = tensors([[-1.0, 0.5]])
    assert float(loss_for(MyLog)(MyLog(), xs, [F32])) == float(loss_for(E.Log)(E.Log(), xs, [F32])) > 0.0
    assert loss_for(E.Relu) is None


class HalfOpenUnit(AbsOpBase, abstract=True):  # (abstract: kept out of the op registry)
    """A user's op that states only its domain: [-1, 1) on input 0, non-zero input 1."""
    in_dtypes = [(DType.float32, DType.float32)]
    out_dtypes = [(DType.float32,)]
    domains = {0: Domain(lo=-1.0, hi=1.0, hi_open=True), 1: Domain(nonzero=True)}

    def type_transfer(self, inputs):
        return [AbsTensor(inputs[0].shape, inputs[0].dtype)]


@pytest.mark.parametrize("x,y,bad", [(0.5, 2.0, False), (-1.0, -3.0, False), (1.0, 2.0, True),
                                     (0.9995, 2.0, True), (-1.5, 2.0, True), (0.0, 0.0, True)])
def test_a_declared_domain_alone_gives_the_loss(x, y, bad):
    """The loss is derived from ``domains``: an open bound keeps one margin (1e-3 in float32) away."""
    out = loss_for(HalfOpenUnit)(None, tensors([[x], [y]]), [F32, F32])
    assert (float(out) > 0.0) is bad


# ---- int_overflow --------------------------------------------------------------------------
@pytest.mark.parametrize("dt,inside", [(I8, [-128.0, 0.0, 127.0]), (U8, [0.0, 255.0]),
                                        (I32, [-2.0 ** 31, 2.0 ** 31 - 1])])
def test_int_overflow_zero_inside_the_range(dt, inside):
    assert float(int_overflow(torch.tensor(inside, dtype=torch.float64), dt)) == 0.0


@pytest.mark.parametrize("dt,value", [(I8, 200.0), (I8, -129.0), (U8, -1.0), (U8, 256.0), (I32, 2.0 ** 31)])
def test_int_overflow_outside_the_range(dt, value):
    x = torch.tensor([value], dtype=torch.float64, requires_grad=True)
    out = int_overflow(x, dt)
    assert float(out.detach()) > 0.0
    (g,) = torch.autograd.grad(out, [x])
    assert float(g) != 0.0
    assert (float(g) > 0) == (value > 0)  # the step x - lr * g goes back towards the range
    with torch.no_grad():
        assert float(int_overflow(x - 1e-2 * g, dt)) < float(out.detach())


# ---- magnitude_loss ------------------------------------------------------------------------
def test_magnitude_loss_zero_inside_bound():
    xs = [torch.tensor([0.5, -1.0, 1.0], dtype=torch.float64), torch.zeros(0, dtype=torch.float64)]
    assert float(magnitude_loss(xs)) == 0.0
    assert float(magnitude_loss([torch.tensor([3.0], dtype=torch.float64)], bound=3.0)) == 0.0
    assert float(magnitude_loss([])) == 0.0


def test_magnitude_loss_pulls_inputs_in():
    a = torch.tensor([3.0, 0.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([-5.0], dtype=torch.float64, requires_grad=True)
    out = magnitude_loss([a, b])
    assert float(out.detach()) == pytest.approx(2.0 / 2 + 4.0)  # per-input means of the excess
    ga, gb = torch.autograd.grad(out, [a, b])
    assert float(ga[0]) > 0 and float(ga[1]) == 0.0 and float(gb[0]) < 0
    with torch.no_grad():
        assert float(magnitude_loss([a - 1e-2 * ga, b - 1e-2 * gb])) < float(out.detach())
    assert float(magnitude_loss([a.detach()], bound=0.5)) == pytest.approx(2.5 / 2)


def test_domain_declared_by_call_is_the_class_attribute():
    """``domain(Op, ...)`` (the registration call) writes the class's ``domains``: one fact, two readers."""
    from nnfuzz.abstract.ranges import VRange, domain, infeasible

    class MySqrt(AbsOpBase, abstract=True):
        pass

    domain(MySqrt, lo=0.0)
    assert MySqrt.domains == {0: Domain(lo=0.0)} and AbsOpBase.domains == {}
    assert float(loss_for(MySqrt)(None, tensors([[-2.0]]), [F32])) > 0.0
    assert infeasible(type("Op", (), {"domains": MySqrt.domains, "name": "MySqrt"})(), [VRange(-3.0, -1.0)])


@pytest.mark.parametrize("op", [E.Acos, E.Asin])
def test_inverse_sines_keep_a_margin_inside_the_unit_interval(op):
    """ORT computed an Acos input of |MVN(x)| over two elements as 1 + 1 ulp (NaN) where the reference had
    1 - 1 ulp (0.000488): a value on the bound is either side of it by a rounding, so the search keeps a
    margin (1e-3 in float32) inside."""
    loss = loss_for(op)
    for x, bad in ((0.5, False), (-0.998, False), (1.0, True), (-1.0, True), (0.9995, True)):
        assert (float(loss(op(), tensors([[x]]), [F32])) > 0.0) is bad, x
