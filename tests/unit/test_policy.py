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
    assert GenPolicy.from_dict(conf) == GenPolicy()
