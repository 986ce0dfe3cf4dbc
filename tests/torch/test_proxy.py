"""Proxy derivatives and integer/bool surrogates (nnfuzz/materialize/torch/proxy.py)."""
import pytest
import torch

from nnfuzz.abstract.dtype import DType
from nnfuzz.ops.binary import spec as B
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.ops.select import spec as S
from nnfuzz.materialize.torch.lowering import lowering_for
from nnfuzz.materialize.torch.proxy import PROXY_SLOPES, apply_proxies, proxy_for


def run(op, args, softs=None, proxy=True):
    fn = lowering_for(type(op))
    assert fn is not None
    return apply_proxies(op, fn, args, softs if softs is not None else [None] * len(args), proxy)


def plain(op, *args):
    return lowering_for(type(op))(op, *args)


def f64(*values, grad=False):
    return torch.tensor(values, dtype=torch.float64, requires_grad=grad)


def grad_of(out, x):
    (g,) = torch.autograd.grad(out.sum(), [x], allow_unused=True)
    return torch.zeros_like(x) if g is None else g


def bits(t):
    """A float32 tensor's bit patterns (tells -0.0 from 0.0)."""
    return t.detach().contiguous().view(torch.int32)


PROXIED = [E.Floor(), E.Ceil(), E.Round(), E.Sign(), E.Relu(), E.Relu6(), S.Clip(min=-1.0, max=1.0),
           E.HardSigmoid(), E.Mish(), E.Silu(), E.Gelu(approximate="none")]


def random_input():
    gen = torch.Generator().manual_seed(1234)
    x = torch.randn(2000, generator=gen) * 4
    return torch.cat([x, torch.tensor([0.5, -0.5, 1.5, -2.5, 3.0, -3.0, 6.5, -7.0])])


@pytest.mark.parametrize("op", PROXIED, ids=lambda o: o.name)
def test_every_tested_op_has_a_proxy(op):
    assert proxy_for(type(op)) is not None
    assert type(op) in PROXY_SLOPES


@pytest.mark.parametrize("op", PROXIED, ids=lambda o: o.name)
def test_forward_values_equal_the_plain_lowering(op):
    x = random_input().requires_grad_(True)
    outs, surs = run(op, [x])
    ref = plain(op, x.detach())
    assert len(outs) == 1 and surs == [None]
    assert outs[0].dtype == ref.dtype == torch.float32
    assert torch.equal(outs[0].detach(), ref)


@pytest.mark.parametrize("op", PROXIED, ids=lambda o: o.name)
def test_forward_values_are_bit_identical(op):
    """Including the sign of zero: ceil(-0.3) and round(-0.3) are -0.0, gelu(-6.0) too in float32."""
    x = random_input().requires_grad_(True)
    outs, _ = run(op, [x])
    assert torch.equal(bits(outs[0]), bits(plain(op, x.detach())))


@pytest.mark.parametrize("op,xs", [
    (E.Floor(), [0.3, -1.7, 2.0, 5.5]),
    (E.Ceil(), [0.3, -1.7, 2.0]),
    (E.Round(), [0.3, -1.7, 2.4]),
    (E.Sign(), [0.3, -1.7, 5.0]),
    (E.Relu(), [-2.0]),
    (E.Relu6(), [-2.0, 8.0]),
    (S.Clip(min=-1.0, max=1.0), [5.0]),
    (S.Clip(min=-1.0, max=1.0), [-5.0]),
    (E.HardSigmoid(), [-10.0, 10.0]),
], ids=lambda v: v.name if hasattr(v, "name") else str(v))
def test_proxy_gradient_where_the_true_one_is_zero(op, xs):
    x = f64(*xs, grad=True)
    true = grad_of(plain(op, x), x)
    assert torch.all(true == 0)  # the premise: the op is flat there
    outs, _ = run(op, [x])
    g = grad_of(outs[0], x)
    assert torch.all(g > 0), g


@pytest.mark.parametrize("op", [E.Mish(), E.Silu(), E.Gelu(approximate="none")], ids=lambda o: o.name)
def test_proxy_replaces_a_wrong_signed_gradient(op):
    x = f64(-5.0, grad=True)
    assert float(grad_of(plain(op, x), x)) < 0  # left of the minimum: the true gradient pulls left
    outs, _ = run(op, [x])
    assert float(grad_of(outs[0], x)) == pytest.approx(1.0)  # the identity's gradient instead


def test_leak_adds_to_the_true_gradient():
    x = f64(0.5, grad=True)  # relu's true gradient is 1 here; the leak adds 0.1
    outs, _ = run(E.Relu(), [x])
    assert float(grad_of(outs[0], x)) == pytest.approx(1.1)


# ---- comparisons, Where and casts: surrogates ------------------------------------------------
def test_comparison_surrogate_and_where_gradient():
    a = f64(1.0, -2.0, 0.5, 3.0, grad=True)
    b = f64(0.0, 1.0, 0.5, -1.0, grad=True)
    outs, surs = run(B.Greater(), [a, b])
    assert outs[0].dtype == torch.bool
    s = surs[0]
    assert s is not None and s.dtype == torch.float64
    assert torch.equal(s.detach(), outs[0].double())  # the bool result as 0/1
    ga, gb = torch.autograd.grad(s.sum(), [a, b], retain_graph=True)
    assert torch.all(ga > 0) and torch.all(gb < 0)

    x = f64(10.0, 10.0, 10.0, 10.0)
    y = f64(-10.0, -10.0, -10.0, -10.0)
    w, wsur = run(S.Where(), [outs[0], x, y], [s, None, None])
    assert wsur == [None]
    assert torch.equal(w[0].detach(), torch.where(outs[0], x, y))
    g = grad_of(w[0], a)
    # raising a makes the condition truer, which moves the output towards x (the larger branch)
    assert torch.all(g > 0), g


def test_where_without_surrogate_has_no_condition_gradient():
    a = f64(1.0, -2.0, grad=True)
    cond = a.detach() > 0
    w, _ = run(S.Where(), [cond, f64(1.0, 1.0), f64(-1.0, -1.0)], [None, None, None])
    assert not w[0].requires_grad


@pytest.mark.parametrize("op,expect", [(B.Less(), [0.0, 1.0, 0.0]), (B.LessEqual(), [0.0, 1.0, 1.0]),
                                       (B.GreaterEqual(), [1.0, 0.0, 1.0]), (B.Equal(), [0.0, 0.0, 1.0])],
                         ids=lambda v: v.name if hasattr(v, "name") else "")
def test_other_comparison_surrogates(op, expect):
    a = f64(1.0, -2.0, 0.5, grad=True)
    b = f64(0.0, 1.0, 0.5)
    outs, surs = run(op, [a, b])
    assert torch.equal(surs[0].detach(), f64(*expect))
    assert torch.equal(outs[0].double(), f64(*expect))
    g = grad_of(surs[0], a)
    if isinstance(op, (B.Less, B.LessEqual)):
        assert torch.all(g < 0)
    elif isinstance(op, B.GreaterEqual):
        assert torch.all(g > 0)
    else:
        assert float(g[0]) < 0 and float(g[1]) > 0  # Equal: towards b from either side


def test_cast_float_to_int_surrogate():
    x = torch.tensor([1.7, -2.3, 40.9], requires_grad=True)
    outs, surs = run(S.Cast(to=DType.int32), [x])
    assert outs[0].dtype == torch.int32
    assert torch.equal(surs[0].detach(), f64(1.0, -2.0, 40.0))
    assert torch.equal(grad_of(surs[0], x), torch.ones(3))


def test_cast_int_to_float_passes_the_surrogate_gradient_on():
    leaf = f64(3.2, -1.6, grad=True)
    hard = torch.tensor([3, -1], dtype=torch.int32)
    sur = hard.double() + (leaf - leaf.detach())
    outs, surs = run(S.Cast(to=DType.float32), [hard], [sur])
    assert surs == [None]
    assert torch.equal(outs[0].detach(), torch.tensor([3.0, -1.0]))
    assert torch.equal(grad_of(outs[0], leaf), f64(1.0, 1.0))


def test_cast_chain_float_int_float():
    x = torch.tensor([2.5, -0.5], requires_grad=True)
    ints, isur = run(S.Cast(to=DType.int32), [x])
    back, _ = run(S.Cast(to=DType.float32), [ints[0]], isur)
    assert torch.equal(back[0].detach(), torch.tensor([2.0, 0.0]))
    assert torch.equal(grad_of(back[0], x), torch.ones(2))


def test_cast_to_bool_surrogate():
    x = torch.tensor([0.0, 2.0, -3.0], requires_grad=True)
    outs, surs = run(S.Cast(to=DType.bool), [x])
    assert torch.equal(surs[0].detach(), f64(0.0, 1.0, 1.0))
    g = grad_of(surs[0], x)
    assert float(g[1]) > 0 and float(g[2]) < 0  # away from 0 makes it truer


# ---- integer ops: the surrogate is the exact result -----------------------------------------
def test_int8_add_overflow_surrogate_is_exact():
    a = torch.tensor([100, 1], dtype=torch.int8)
    b = torch.tensor([100, 2], dtype=torch.int8)
    leaf = f64(100.0, 1.0, grad=True)
    sa = a.double() + (leaf - leaf.detach())
    outs, surs = run(B.Add(), [a, b], [sa, None])
    assert outs[0].dtype == torch.int8
    assert outs[0].tolist() == [-56, 3]  # the hard result wraps
    assert torch.equal(surs[0].detach(), f64(200.0, 3.0))  # the surrogate does not
    assert torch.equal(grad_of(surs[0], leaf), f64(1.0, 1.0))


def test_int_add_without_surrogates_is_exact_too():
    a = torch.tensor([100], dtype=torch.int8)
    outs, surs = run(B.Add(), [a, a])
    assert outs[0].tolist() == [-56]
    assert surs[0].tolist() == [200.0]


def test_bool_ops_surrogates():
    p = torch.tensor([True, True, False, False])
    q = torch.tensor([True, False, True, False])
    for op, expect in [(B.And(), [1.0, 0.0, 0.0, 0.0]), (B.Or(), [1.0, 1.0, 1.0, 0.0]),
                       (B.Xor(), [0.0, 1.0, 1.0, 0.0])]:
        outs, surs = run(op, [p, q])
        assert torch.equal(surs[0], f64(*expect)), op.name
    outs, surs = run(B.Not(), [p])
    assert torch.equal(surs[0], f64(0.0, 0.0, 1.0, 1.0))


# ---- proxy=False -----------------------------------------------------------------------------
@pytest.mark.parametrize("op", PROXIED, ids=lambda o: o.name)
def test_no_proxy_outputs_are_the_plain_lowering(op):
    x = random_input().requires_grad_(True)
    outs, surs = run(op, [x], proxy=False)
    ref = plain(op, x)
    assert surs == [None]
    assert torch.equal(bits(outs[0]), bits(ref))
    assert torch.equal(grad_of(outs[0], x), grad_of(ref, x))  # the op's own gradient, no proxy


def test_no_proxy_surrogates_carry_no_gradient():
    a = f64(1.0, -2.0, grad=True)
    b = f64(0.0, 1.0, grad=True)
    outs, surs = run(B.Greater(), [a, b], proxy=False)
    assert torch.equal(outs[0], plain(B.Greater(), a, b))
    assert surs[0] is not None and not surs[0].requires_grad
    assert torch.equal(surs[0], f64(1.0, 0.0))

    x = torch.tensor([1.7, -2.3], requires_grad=True)
    outs, surs = run(S.Cast(to=DType.int32), [x], proxy=False)
    assert torch.equal(outs[0], plain(S.Cast(to=DType.int32), x))
    assert not surs[0].requires_grad and torch.equal(surs[0], f64(1.0, -2.0))

    leaf = f64(100.0, grad=True)
    a8 = torch.tensor([100], dtype=torch.int8)
    outs, surs = run(B.Add(), [a8, a8], [a8.double() + (leaf - leaf.detach()), None], proxy=False)
    assert outs[0].tolist() == [-56]
    assert not surs[0].requires_grad and surs[0].tolist() == [200.0]  # still exact, for overflow
