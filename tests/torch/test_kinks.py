"""Kinks (nnfuzz/abstract/kink.py) as data on the specs and the value search's kink loss
(nnfuzz/materialize/torch/kinks.py, ``search.kinks``: oracle=grad turns it on)."""
import numpy as np
import pytest
import torch
from graphs import chain

from nnfuzz.abstract import OP_REGISTRY, DType
from nnfuzz.materialize.search import SearchConfig, search_values
from nnfuzz.materialize.torch.kinks import KINK_MARGIN, with_kinks
from nnfuzz.ops.activation.spec import HardSigmoidAlphaBeta
from nnfuzz.ops.binary.spec import Max
from nnfuzz.ops.elementwise.spec import Floor, Relu, Round, Tanh
from nnfuzz.ops.select.spec import Clip


def loss(op, *xs, dt=DType.float32):
    fn = with_kinks(None, type(op))
    return float(fn(op, [torch.tensor(x, dtype=torch.float64) for x in xs], [dt] * len(xs)))


def test_the_loss_is_zero_on_and_away_from_a_kink_and_positive_near_it():
    m = KINK_MARGIN[DType.float32]
    assert loss(Relu(), [0.0, 0.5, -0.5]) == 0  # exactly on it: every system computes the same derivative
    assert loss(Relu(), [m / 2]) > 0 and loss(Relu(), [-m / 2]) > 0
    assert loss(Floor(), [3.0, 2.5]) == 0 and loss(Floor(), [3.0 + m]) > 0
    assert loss(Round(), [2.5 - m]) > 0 and loss(Round(), [2.0]) == 0
    assert loss(Clip(min=-1.0, max=6.0), [-1.0 + m / 4]) > 0 and loss(Clip(min=-1.0, max=6.0), [0.0]) == 0
    assert loss(Max(), [1.0, 2.0], [1.0 + m / 4, 3.0]) > 0 and loss(Max(), [1.0], [1.5]) == 0
    hs = HardSigmoidAlphaBeta(alpha=0.5, beta=0.25)  # 0.5 x + 0.25 reaches 0 at -0.5 and 1 at 1.5
    assert loss(hs, [-0.5 + m / 4]) > 0 and loss(hs, [1.5 - m / 4]) > 0 and loss(hs, [0.0, -0.5, 1.5]) == 0
    assert with_kinks(None, Tanh) is None  # no kink: no loss


def test_every_kink_attribute_is_an_attribute_of_its_op():
    for name, cls in OP_REGISTRY.items():
        for index, kink in cls.kinks.items():
            # an attribute, or a property computed from attributes (HardSigmoidAlphaBeta's -beta / alpha)
            assert 0 <= index and all(a in getattr(cls, "attr_choices", {}) or isinstance(getattr(cls, a, None), property)
                                      for a in kink.attrs), name


def test_the_search_moves_values_near_kinks_away_only_when_asked():
    g = chain(Tanh(), Relu(), shape=(40,))
    x = {"x": np.linspace(-1e-4, 1e-4, 40).astype(np.float32)}  # tanh keeps them next to relu's kink
    plain = search_values(g, {}, x, SearchConfig(time_ms=2000), 1)
    assert plain.ok and np.abs(plain.inputs["x"]).min() < 1e-4
    away = search_values(g, {}, x, SearchConfig(kinks=True, time_ms=2000), 1)
    t = np.tanh(away.inputs["x"].astype(np.float64))
    assert away.ok and np.all((np.abs(t) >= KINK_MARGIN[DType.float32]) | (t == 0))


def test_ranked_kinks_hold_the_leading_values_of_each_group_apart():
    """ReduceMax/ArgMin along the axis, TopK's k leading values, a MaxPool's windows, GlobalMaxPool's spatial
    dims and AdaptiveMaxPool2d's blocks: a near or exact tie among the leading values costs; one lower in
    the group, one across the padding, and an exact tie at an integral value (a flat region's) do not."""
    from nnfuzz.ops.indexing.spec import TopK
    from nnfuzz.ops.pool.spec import AdaptiveMaxPool2d, GlobalMaxPool, MaxPool2d
    from nnfuzz.ops.reduce.spec import ArgMin, ReduceL1, ReduceMax

    m = KINK_MARGIN[DType.float32]
    assert loss(ReduceMax(1, keepdims=False), [[0.3, 0.3, 0.1], [1.0, 2.0, 0.5]]) > 0  # an exact tie
    assert loss(ReduceMax(1, keepdims=False), [[0.3, 0.3 - m / 4, 0.1]]) > 0          # a near one
    assert loss(ReduceMax(1, keepdims=False), [[0.3, 0.1, 0.1]]) == 0                # below the maximum
    assert loss(ReduceMax(1, keepdims=False), [[1.0, 1.0, -2.0]]) == 0               # a flat region's value
    assert loss(ReduceMax(0, keepdims=True), [[0.3, 0.3, 0.1], [1.0, 2.0, 0.5]]) == 0  # the other axis
    assert loss(ArgMin(0, keepdims=False), [0.7, -0.2, -0.2 + m / 4]) > 0 and loss(ArgMin(0, keepdims=False), [0.7, 0.7, -0.2]) == 0
    assert loss(TopK(0, 2, largest=True), [0.9, 0.5, 0.5 - m / 4, 0.1]) > 0  # the 2nd and the 3rd decide
    assert loss(TopK(0, 1, largest=True), [0.9, 0.5, 0.5 - m / 4, 0.1]) == 0
    assert loss(TopK(0, 1, largest=False), [0.9, 0.5, 0.5 - m / 4, 0.1]) == 0  # 0.1 leads the smallest
    window = np.array([[[[0.3, 0.3, 0.9], [0.1, 0.2, 0.4]]]])  # [1, 1, 2, 3]
    assert loss(MaxPool2d(2, 2, 2, 2, 0, 0, 1, 1), window) > 0      # the window [[0.3, 0.3], [0.1, 0.2]]
    assert loss(MaxPool2d(2, 1, 2, 1, 0, 0, 1, 1), window) == 0     # windows [0.3, 0.1], [0.3, 0.2], [0.9, 0.4]
    assert loss(MaxPool2d(1, 2, 1, 1, 0, 0, 1, 1), window) > 0      # [0.3, 0.3], [0.3, 0.9], ...
    assert loss(MaxPool2d(1, 2, 1, 2, 0, 1, 1, 1), window) == 0     # [pad, 0.3], [0.3, 0.9], ...: no value in padding
    assert loss(GlobalMaxPool(), window) == 0 and loss(GlobalMaxPool(), window * [1, 1, 0.3]) > 0
    assert loss(AdaptiveMaxPool2d(1, 3), window) == 0 and loss(AdaptiveMaxPool2d(1, 1), window * [1, 1, 0.3]) > 0
    assert loss(ReduceL1(0, keepdims=False), [0.5, m / 2]) > 0


def test_pooling_windows_are_the_ones_torch_pools():
    from nnfuzz.materialize.torch.kinks import window_indices

    rng = np.random.default_rng(0)
    for size, kernel, stride, pad, dil in (((7,), (3,), (2,), (1,), (1,)), ((4, 5), (2, 3), (2, 1), (0, 1), (1, 1)),
                                          ((5, 4, 6), (2, 2, 3), (1, 2, 2), (1, 0, 1), (1, 2, 1))):
        x = torch.tensor(rng.standard_normal((1, 2) + size))
        pool = getattr(torch.nn.functional, f"max_pool{len(size)}d")
        want = pool(x, kernel, stride, pad, dil).reshape(2, -1)
        idx = window_indices(size, kernel, stride, pad, dil)
        got = x.reshape(2, -1)[:, np.maximum(idx, 0)].masked_fill(torch.from_numpy(idx < 0), -np.inf).amax(-1)
        assert torch.equal(got, want), size


def test_every_ranked_kink_names_attributes_of_its_op():
    from nnfuzz.abstract.kink import Kink

    for name, cls in OP_REGISTRY.items():
        for kink in cls.kinks.values():
            named = [a for a in (kink.top, kink.largest) if isinstance(a, str)]
            known = set(getattr(cls, "attr_choices", {})) | set(getattr(cls, "attr_kinds", {}))
            assert all(a in known for a in named), (name, named)
    with pytest.raises(ValueError, match="ranked='rows'"):
        Kink(ranked="rows")



def test_a_kink_hit_by_cancellation_leaves_the_gradient_undetermined():
    """The xla-cpu campaign's case (tests/cases/xla-grad-kink-cancellation): |max(v) - v| with v = (x - w)^2.
    At the maximum the Sub gives exactly 0 in eager; XLA computes v again inside the Sub's kernel with an FMA
    (4e-6), and the two backward uses of |.|'s derivative there disagreed: a gradient off by 33.6. Such a
    hit is no gradient test; an exact hit made by a clamp (a Relu's 0), or a Sub that is not a cancellation,
    leaves the test alone."""
    import pickle
    from pathlib import Path

    from graphs import chain
    from nnfuzz.abstract import AbsTensor
    from nnfuzz.gir import GraphIR, Inst
    from nnfuzz.materialize.torch.kinks import cancelled_kink
    from nnfuzz.ops.binary.spec import Sub
    from nnfuzz.ops.elementwise.spec import Abs

    case = Path(__file__).parents[1] / "cases" / "xla-grad-kink-cancellation"
    gir = GraphIR.loads((case / "gir.json").read_text())
    inputs = pickle.loads((case / "oracle.pkl").read_bytes())["input"]
    why = cancelled_kink(gir, {}, inputs)
    assert why is not None and "Abs" in why and "Sub" in why, why
    assert cancelled_kink(chain(Relu(), Relu(), shape=(3,)), {}, {"x": np.array([-1, 0, 2], np.float32)}) is None
    assert cancelled_kink(chain(Abs(), shape=(3,)), {}, {"x": np.array([-1, 0, 2], np.float32)}) is None
    t = AbsTensor([2], DType.float32)
    sub = GraphIR(vars={"a": t, "b": t, "d": t, "y": t}, inputs=["a", "b"],
                  insts=[Inst(Sub(), ["a", "b"], ["d"]), Inst(Abs(), ["d"], ["y"])], outputs=["y"]).check()
    zero = np.zeros(2, np.float32)
    assert cancelled_kink(sub, {}, {"a": np.array([1, 0], np.float32), "b": zero}) is None  # 0 - 0: no cancellation
    assert cancelled_kink(sub, {}, {"a": np.array([1, 3], np.float32), "b": np.array([2, 3], np.float32)}) is not None


def test_a_quotient_on_a_ratio_kink_leaves_the_gradient_undetermined():
    """xla-cpu false alarm (oracle=grad, float64): ``floormod(v0, v0)`` with v0 = pow(i1, i2). The gradient
    in the divisor is -floor(v0 / v0); XLA rewrites x / pow(a, b) into x * pow(a, -b), 1 ulp below 1 for
    some elements, and floors it to 0 where TF eager has 1 (grad:i1 456/2184 values off, max abs 1.1e3)."""
    from nnfuzz.abstract import AbsTensor
    from nnfuzz.gir import GraphIR, Inst
    from nnfuzz.materialize.torch.kinks import cancelled_kink
    from nnfuzz.ops.binary.spec import Fmod, Pow
    from nnfuzz.ops.tfonly.spec import FloorMod

    t = AbsTensor([3], DType.float64)
    for op in (FloorMod(), Fmod()):
        gir = GraphIR(vars={"a": t, "b": t, "v": t, "y": t}, inputs=["a", "b"],
                      insts=[Inst(Pow(), ["a", "b"], ["v"]), Inst(op, ["v", "v"], ["y"])], outputs=["y"]).check()
        why = cancelled_kink(gir, {}, {"a": np.array([0.3, 1.9, 2.6]), "b": np.array([-1.3, 0.4, 1.7])})
        assert why is not None and type(op).__name__ in why and "integer" in why, why
        two = GraphIR(vars={"a": t, "b": t, "y": t}, inputs=["a", "b"], insts=[Inst(op, ["a", "b"], ["y"])],
                      outputs=["y"]).check()
        assert cancelled_kink(two, {}, {"a": np.array([1.5, 2.5, -0.7]), "b": np.array([1.0, 1.0, 0.5])}) is None
        assert cancelled_kink(two, {}, {"a": np.array([1.5, 3.0, -0.7]), "b": np.array([1.0, 1.5, 0.5])}) is not None


@pytest.mark.parametrize("op_name", ["FloorMod", "Fmod"])
def test_the_ratio_kink_loss_pushes_quotients_off_integers(op_name):
    op = OP_REGISTRY[op_name]()
    loss = with_kinks(None, type(op))
    dts = [DType.float32, DType.float32]
    b = torch.tensor([1.0, 2.0], requires_grad=True)
    near = torch.tensor([2.0005, -3.998], requires_grad=True)  # quotients 2.0005 and -1.999
    value = loss(op, [near, b], dts)
    assert float(value) > 0
    value.backward()
    assert float(near.grad.abs().sum()) > 0 and float(b.grad.abs().sum()) > 0
    assert float(loss(op, [torch.tensor([2.5, -3.0]), torch.tensor([1.0, 2.0])], dts)) == 0  # 2.5 and -1.5
