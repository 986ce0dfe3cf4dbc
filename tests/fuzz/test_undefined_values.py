"""Values the search cannot bring into an op's domain (an integer Mod by a divisor that is always 0) are
undefined behaviour: ORT may raise on them, and that is no bug. Such a model is counted and logged, not
run (regression: a 60 s ort-cpu campaign saved 'Integer division by zero' from ORT's Mod and Div as crashes)."""

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.fuzz.campaign import CampaignConfig
from nnfuzz.fuzz.loop import Campaign
from nnfuzz.fuzz.plan import CampaignPlan
from nnfuzz.fuzz.produce import Produced
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.search import SearchConfig
from nnfuzz.oracles import campaign_oracles
from nnfuzz.ops.binary import spec as B
from nnfuzz.ops.bitwise import spec as K
from nnfuzz.fuzz.runlog import read_log


def _mod_by_zero() -> GraphIR:
    g = GraphIR()
    for v in ("x", "z", "y"):
        g.vars[v] = AbsTensor([4], DType.int32)
    g.inputs, g.outputs = ["x"], ["y"]
    g.insts = [Inst(B.Sub(), ["x", "x"], ["z"]), Inst(K.Mod(), ["x", "z"], ["y"])]  # x mod (x - x)
    return g.check()


def test_a_divisor_that_is_always_zero_makes_the_values_undefined():
    model = build_model(_mod_by_zero(), 0, search=SearchConfig(time_ms=200))
    assert model.search["values_undefined"] and not model.search["ok"]
    assert "Mod" in model.search["blocker"] and model.oracle.output is None


def test_the_campaign_counts_undefined_values_and_does_not_run_them(tmp_path):
    model = build_model(_mod_by_zero(), 0, search=SearchConfig(time_ms=200))
    cc = CampaignConfig(backend="ort-cpu", backend_options={}, policy=GenPolicy(seed=1), time_s=30, out=tmp_path,
                        ui="plain")
    campaign = Campaign(cc, CampaignPlan((), {}, cc.export, cc.search, True, campaign_oracles(cc)))
    p = Produced(seed=0, rec={"seed": 0}, gir_text=model.gir.dumps(), reference=model.oracle, search=model.search,
                 values_undefined=model.search["values_undefined"], model=model)
    campaign.consume(None, p)  # no sandbox: running the model would fail here
    campaign.log.close()
    assert campaign.counters.undefined_values == 1 and campaign.counters.tests == 0
    (rec,) = list(read_log(tmp_path))
    assert rec["verdict"] == "undefined-values" and "Mod" in rec["blocker"]


def test_the_campaigns_false_alarm_graph_is_called_undefined():
    """The graph of the saved false alarm (tests/cases/ort-intdiv-undefined): another branch of it is
    non-finite too, which the first version of this rule (all finite, not ok) let through."""
    from pathlib import Path

    gir = GraphIR.loads((Path(__file__).parents[1] / "cases" / "ort-intdiv-undefined" / "gir.json").read_text())
    model = build_model(gir, 539817516, search=SearchConfig(), export=False)
    assert model.search["values_undefined"], model.search
    assert "IntDiv" in model.search["blocker"]


def test_a_shift_too_far_for_its_surrogate_is_outside_the_domain():
    """x << x with x = 154350 (far outside BitShift's 0..7) makes the shift's float surrogate NaN, and the NaN
    loss read as "no violation": the check passed it, and the Div by its result 0 too (campaign 27/29, seed
    4638: ORT's "Integer division by zero", saved as a crash in all three ort-cpu campaigns)."""
    import numpy as np

    from nnfuzz.materialize.search import ValueSearch

    g = GraphIR()
    g.vars["a"] = AbsTensor([1], DType.int32)
    g.inputs = ["a"]
    for op, ins, out in [(K.BitShift(direction="LEFT"), ["a", "a"], "s"), (K.IntDiv(), ["a", "s"], "q")]:
        g.vars[out] = op.checked_type_transfer([g.vars[v] for v in ins])[0]
        g.insts.append(Inst(op, ins, [out]))
    g.outputs = ["q"]
    g.check()
    far = ValueSearch(g, SearchConfig()).check({"a": np.array([154350], np.int32)})
    assert (far.safe, far.first_bad, far.out_of_domain) == (False, 0, True)
    near = ValueSearch(g, SearchConfig()).check({"a": np.array([3], np.int32)})
    assert near.safe
