"""A campaign restarted into the same ``fuzz.out`` goes on (fuzz/resume.py): bug numbers continue, the
seeds already tested are never tested again, and a corrupt campaign_state.json is a clear error that
changes nothing."""
import json
import sys
from pathlib import Path

import pytest

from nnfuzz.errors import ConfigError
from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
from nnfuzz.fuzz.resume import STATE_FILE, merge, seed_at
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.fuzz.runlog import read_log

HERE = Path(__file__).parent
SAFE_OPS = ["Relu", "Add", "Mul", "Sigmoid", "Tanh", "Transpose"]


def _campaign(out: Path, seed, **kw):
    sys.path.insert(0, str(HERE))
    cc = CampaignConfig(backend="fault-cpu", backend_options={"always": "wrong"}, backend_path="fault_backend:FaultBackend",
                        policy=GenPolicy(max_nodes=3, dtypes=["float32"], include=SAFE_OPS, seed=seed), out=out,
                        ui="plain", probe=False, time_s=60, rerun=False, **{"reduce": False, **kw})
    return run_campaign(cc)


def _records(out: Path) -> list:
    return list(read_log(out))


def test_seed_at_skips_the_tested_ranges():
    tested = merge([(10, 13), (15, 16), (13, 14)])
    assert tested == ((10, 14), (15, 16))
    assert [seed_at(8, tested, i) for i in range(6)] == [8, 9, 14, 16, 17, 18]
    assert [seed_at(20, tested, i) for i in range(2)] == [20, 21]
    assert seed_at(5, (), 3) == 8


@pytest.mark.slow
def test_a_restarted_campaign_continues_numbering_and_never_repeats_a_seed(tmp_path):
    out = tmp_path / "bugs"
    first = _campaign(out, seed=100, max_tests=4, producers=1, workers=2)
    assert first.tests >= 4 and first.bugs_saved == first.tests
    seeds_a = {r["seed"] for r in _records(out) if "verdict" in r}
    state = json.loads((out / STATE_FILE).read_text())
    assert state["start_seed"] == 100 and state["campaigns"] == 1

    second = _campaign(out, seed=None, max_tests=3, producers=0, workers=1)  # mgen.seed unset: goes on
    recs = _records(out)
    seeds_b = {r["seed"] for r in recs if "verdict" in r} - seeds_a
    assert second.tests == 3 and len(seeds_b) == 3 and min(seeds_b) > 100
    third = _campaign(out, seed=100, max_tests=2, producers=0, workers=1)  # the first campaign's seed again
    seeds = [r["seed"] for r in _records(out) if "verdict" in r]
    assert third.tests == 2 and len(seeds) == len(set(seeds)), "a seed was tested twice"
    folders = sorted(p.name for p in out.iterdir() if p.is_dir() and p.name.isdigit())
    total = first.bugs_saved + second.bugs_saved + third.bugs_saved
    assert folders == [f"{i:04d}" for i in range(total)]  # numbered on, without gaps
    assert json.loads((out / STATE_FILE).read_text())["campaigns"] == 3


@pytest.mark.parametrize("text", ["{not json", '{"version": 1}', '{"version": 9, "tested_seeds": [], "start_seed": 1}'])
def test_a_corrupt_state_file_is_a_clear_error_that_changes_nothing(tmp_path, text):
    out = tmp_path / "bugs"
    out.mkdir()
    (out / STATE_FILE).write_text(text)
    (out / "0000").mkdir()
    with pytest.raises(ConfigError, match=f"{STATE_FILE} is not a readable campaign state.*move it aside"):
        _campaign(out, seed=None, max_tests=1, producers=0)
    assert (out / STATE_FILE).read_text() == text and sorted(p.name for p in out.iterdir()) == ["0000", STATE_FILE]
