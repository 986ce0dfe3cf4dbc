"""Kinks (nnfuzz/abstract/kink.py) as data on the specs and the value search's kink loss
(nnfuzz/materialize/torch/kinks.py, ``search.kinks``: oracle=grad turns it on)."""
import numpy as np
import torch
from graphs import chain

from nnfuzz.abstract import OP_REGISTRY, DType
from nnfuzz.materialize.search import SearchConfig, search_values
from nnfuzz.materialize.torch.kinks import KINK_MARGIN, with_kinks
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
    assert with_kinks(None, Tanh) is None  # no kink: no loss


def test_every_kink_attribute_is_an_attribute_of_its_op():
    for name, cls in OP_REGISTRY.items():
        for index, kink in cls.kinks.items():
            assert 0 <= index and all(a in getattr(cls, "attr_choices", {}) for a in kink.attrs), name


def test_the_search_moves_values_near_kinks_away_only_when_asked():
    g = chain(Tanh(), Relu(), shape=(40,))
    x = {"x": np.linspace(-1e-4, 1e-4, 40).astype(np.float32)}  # tanh keeps them next to relu's kink
    plain = search_values(g, {}, x, SearchConfig(time_ms=2000), 1)
    assert plain.ok and np.abs(plain.inputs["x"]).min() < 1e-4
    away = search_values(g, {}, x, SearchConfig(kinks=True, time_ms=2000), 1)
    t = np.tanh(away.inputs["x"].astype(np.float64))
    assert away.ok and np.all((np.abs(t) >= KINK_MARGIN[DType.float32]) | (t == 0))
