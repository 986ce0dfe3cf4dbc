"""A producer's growth over its base (fuzz/producer_memory.py): what has fresh producers replace it."""
from types import SimpleNamespace

from nnfuzz.fuzz import producer_memory as pm


def _slots(n):
    return SimpleNamespace(rss=[0] * n, base=[0] * n)


def test_the_base_is_taken_after_the_first_models_and_only_then():
    slots = _slots(2)
    for made in range(1, pm.BASE_MODELS):
        pm.note(slots, 1, made)
    assert slots.base == [0, 0] and slots.rss[1] > 0  # (rss is read from /proc: Linux, as in CI)
    pm.note(slots, 1, pm.BASE_MODELS)
    assert slots.base[1] == slots.rss[1] > 0
    slots.rss[1] = 1  # a later model's size must not move the base
    pm.note(slots, 1, pm.BASE_MODELS + 1)
    assert slots.base[1] != 1


def test_a_producer_grown_past_the_share_over_its_base_is_worn_out():
    slots = _slots(2)
    slots.base[:] = [500, 400]
    slots.rss[:] = [540, 440]          # +8 %, +10 %: not past 10 %
    assert not pm.grown(slots, 0.1)
    slots.rss[1] = 441                 # +10.25 %
    assert pm.grown(slots, 0.1)
    assert not pm.grown(slots, 0.0)    # 0: never
    slots.base[:] = [0, 0]             # no base yet (a fresh generation): never
    assert not pm.grown(slots, 0.1)
