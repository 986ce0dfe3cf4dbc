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


@pytest.mark.slow
def test_a_forked_producer_that_dies_is_reported_by_its_slot_and_the_producers_restart(tmp_path, monkeypatch):
    """The first producer reaps the ones it forked: a forked one's SIGSEGV is seen with its own slot and
    exit code, and every slot goes on after the restart (the model it died making is skipped)."""
    from nnfuzz.fuzz.plan import CampaignPlan
    from nnfuzz.fuzz.producers import Producers
    from nnfuzz.generate.opset import select_ops

    monkeypatch.setenv(DIE_AT_ENV, "3")   # model 3: slot 1 of 2, a forked producer
    cc = CampaignConfig(backend="ort-cpu", backend_options={}, policy=GenPolicy(max_nodes=3, seed=40), time_s=120.0,
                        out=tmp_path, ui="plain", log=None, producers=2, search=None)
    plan = CampaignPlan(tuple(select_ops(cc.policy, dialects=("tf",))), {}, cc.export, cc.search, True, ())
    deaths = []
    producers = Producers(cc, 2)
    producers.on_death = deaths.append
    try:
        producers.go(cc, plan, 120.0)
        got = []
        while len(got) < 8:
            p = producers.get(timeout=60.0)
            if p is not None:
                got.append(p.index)
    finally:
        producers.close()
    assert [(d["slot"], d["exit_code"], d["index"], d["seeds"]) for d in deaths] == [(1, -11, 3, [43])]
    assert producers.restarts == 1
    assert 3 not in got and len(got) == len(set(got)) and {i % 2 for i in got if i > 3} == {0, 1}, got


@pytest.mark.slow
def test_producers_that_die_again_and_again_without_a_model_end_the_campaign_naming_their_seeds(tmp_path, monkeypatch):
    """Restarts are for a crash now and then: producers that die MAX_QUIET_DEATHS + 1 times in a row with no
    model made in between cannot work, and the campaign ends with an error naming the seeds they held."""
    from nnfuzz.errors import NNFuzzError
    from nnfuzz.fuzz.producer_watch import MAX_QUIET_DEATHS

    monkeypatch.setenv(DIE_AT_ENV, "2+")   # model 2 and every one after it: each restarted producer dies too
    cc = CampaignConfig(backend="ort-cpu", backend_options={}, out=tmp_path / "bugs", ui="plain", probe=False,
                        time_s=120, policy=GenPolicy(max_nodes=3, dtypes=["float32"], include=["Relu", "Add"], seed=700),
                        producers=1, workers=1, reduce=False, search=None)
    with pytest.raises(NNFuzzError, match=rf"exited \(exit code -11\) {MAX_QUIET_DEATHS + 1} time\(s\) with no model "
                                          r"made in between; the seeds they held: \[70\d\]"):
        run_campaign(cc)
    recs = list(read_log(cc.out))
    died = [r["producer_died"] for r in recs if "producer_died" in r]
    # each death logged, then the end; more when the first death took models before it (indices 0 and 1) still
    # unsent in the dying producer's queue feeder: the restarted producer makes each again, which resets the
    # count, one more death per model made again (seen under a full suite's load: deaths at 2..5, and at 2..7)
    indices = [d["index"] for d in died]
    assert indices == list(range(2, 2 + len(indices))), died
    assert MAX_QUIET_DEATHS <= len(indices) <= MAX_QUIET_DEATHS + 3, died
    assert {r["seed"] for r in recs if "verdict" in r} <= {700, 701}
