"""A producer that dies (a native crash: SIGSEGV) does not end the campaign (fuzz/producer_watch.py):
it is restarted and counted, and the log names the seed it held and shows its Python stack."""
import pytest

from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
from nnfuzz.fuzz.producer_watch import DIE_AT_ENV
from nnfuzz.fuzz.resume import seed_at
from nnfuzz.fuzz.runlog import read_log
from nnfuzz.generate.policy import GenPolicy


@pytest.mark.slow
def test_a_producer_killed_by_sigsegv_is_restarted_and_the_campaign_goes_on(tmp_path, monkeypatch):
    monkeypatch.setenv(DIE_AT_ENV, "2")   # the producer making model number 2 kills itself with SIGSEGV
    out = tmp_path / "bugs"
    cc = CampaignConfig(backend="ort-cpu", backend_options={}, out=out, ui="plain", probe=False, time_s=90,
                        policy=GenPolicy(max_nodes=3, dtypes=["float32"], include=["Relu", "Add", "Mul"], seed=500),
                        producers=2, workers=1, max_tests=6, reduce=False, search=None)
    counters = run_campaign(cc)
    assert counters.producer_restarts == 1
    assert counters.tests == 6, "the campaign ended early"
    recs = list(read_log(out))
    died = [r["producer_died"] for r in recs if "producer_died" in r]
    assert len(died) == 1
    assert died[0]["exit_code"] == -11 and died[0]["index"] == 2
    assert died[0]["seeds"] == [seed_at(500, (), 2)] == [502]
    assert "Fatal Python error: Segmentation fault" in died[0]["stack"] and "maybe_die" in died[0]["stack"]
    tested = [r["seed"] for r in recs if "verdict" in r]
    assert 502 not in tested and len(tested) == len(set(tested)), tested
