"""Fresh producers replace the running ones every ``fuzz.producer_models`` models (fuzz/producers.py):
a planned restart that bounds their native caches' memory over a long campaign. It is no death, and no
model is lost or made twice."""
import pytest

from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
from nnfuzz.fuzz.runlog import read_log
from nnfuzz.generate.policy import GenPolicy


@pytest.mark.slow
def test_producers_are_replaced_every_n_models_without_losing_or_repeating_one(tmp_path):
    out = tmp_path / "bugs"
    cc = CampaignConfig(backend="ort-cpu", backend_options={}, out=out, ui="plain", probe=False, time_s=120,
                        policy=GenPolicy(max_nodes=3, dtypes=["float32"], include=["Relu", "Add", "Mul"], seed=900),
                        producers=2, producer_models=3, workers=1, max_tests=14, reduce=False, search=None)
    counters = run_campaign(cc)
    assert counters.tests == 14
    assert counters.producer_restarts == 0, "a planned replacement counted as a death"
    assert counters.producer_recycles >= 2, counters.producer_recycles  # after models 6 and 12
    recs = list(read_log(out))
    recycled = [r["producers_recycled"] for r in recs if "producers_recycled" in r]
    assert len(recycled) == counters.producer_recycles
    assert all(r["models"] == 6 for r in recycled), recycled
    tested = sorted(r["seed"] for r in recs if "verdict" in r)
    assert len(set(tested)) == len(tested) == 14, tested  # none made twice
    for k in (0, 1):  # none skipped across the replacements: each slot's seeds 900 + k, 902 + k, ... without a gap
        mine = [s for s in tested if s % 2 == k]   # (one slot may run ahead of the other: a slow graph)
        assert mine == list(range(900 + k, max(mine) + 1, 2)), tested
