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
    # none skipped across the replacements (the last few may be in flight when the 14th test ends it)
    assert set(range(900, 910)) <= set(tested), tested
