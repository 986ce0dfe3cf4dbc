import pytest

from nnfuzz.errors import ConfigError
from nnfuzz.generate.policy import GenPolicy


def test_defaults_are_valid():
    p = GenPolicy()
    assert p.binning is True and p.max_rank == 5


@pytest.mark.parametrize("kw, shown", [
    ({"max_rank": 9}, "9"), ({"max_nodes": 0}, "0"), ({"dtypes": ["float13"]}, "float13"),
    ({"forward_prob": 1.5}, "1.5"), ({"binning": "yes"}, "yes"), ({"max_nodes": "ten"}, "ten"),
])
def test_bad_values_show_the_value(kw, shown):
    with pytest.raises(ConfigError, match=shown):
        GenPolicy(**kw)


def test_unknown_key_suggests_the_close_one():
    with pytest.raises(ConfigError, match="did you mean mgen.max_nodes"):
        GenPolicy.from_dict({"max_node": 3})


def test_yaml_defaults_match_the_dataclass():
    from pathlib import Path

    import yaml

    conf = yaml.safe_load((Path(__file__).parents[2] / "conf" / "mgen" / "default.yaml").read_text())
    assert set(conf) == set(GenPolicy().to_dict())
    # the one difference: the command line draws a fresh seed per run (null), the dataclass says 0 so
    # that library calls are reproducible
    assert conf["seed"] is None and GenPolicy().seed == 0
    assert GenPolicy.from_dict(conf) == GenPolicy(seed=None)


def test_a_null_seed_is_drawn_and_a_given_one_kept():
    drawn = [GenPolicy(seed=None, max_nodes=3).with_concrete_seed() for _ in range(3)]
    assert all(isinstance(p.seed, int) and p.seed >= 0 and p.max_nodes == 3 for p in drawn)
    assert len({p.seed for p in drawn}) == 3
    assert GenPolicy(seed=42).with_concrete_seed().seed == 42
    with pytest.raises(ConfigError, match="-1"):
        GenPolicy(seed=-1)
