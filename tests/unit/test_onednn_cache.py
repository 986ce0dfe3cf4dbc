"""nnfuzz caps oneDNN's primitive cache for its own processes (fuzz/sizing.py bound_onednn_cache: a producer
kept a compiled primitive per convolution shape, up to 1024, and grew with them), and not for the systems'
sandbox workers, whose environment is the system's own; a value the user set is left as it is."""
import os

from nnfuzz.fuzz import sizing


def test_the_cap_is_nnfuzzs_own_and_the_users_value_stands(monkeypatch):
    monkeypatch.delenv(sizing.ONEDNN_CACHE_ENV, raising=False)
    monkeypatch.setattr(sizing, "_OWN_ENV", {})
    sizing.bound_onednn_cache()
    assert os.environ[sizing.ONEDNN_CACHE_ENV] == sizing.ONEDNN_CACHE
    assert sizing.ONEDNN_CACHE_ENV not in sizing.systems_env(os.environ)
    assert sizing.systems_env({"PATH": "/bin"}) == {"PATH": "/bin"}

    monkeypatch.setenv(sizing.ONEDNN_CACHE_ENV, "7")
    monkeypatch.setattr(sizing, "_OWN_ENV", {})
    sizing.bound_onednn_cache()
    assert os.environ[sizing.ONEDNN_CACHE_ENV] == "7" and sizing.systems_env(os.environ)[sizing.ONEDNN_CACHE_ENV] == "7"
