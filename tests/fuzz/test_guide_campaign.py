"""A campaign with coverage guidance (mgen.guide=coverage, the default): guide_state.json appears in the
bug store folder with what the tested graphs covered and the saved bug's trigger, campaign.jsonl logs
coverage, a campaign resumed into the same folder continues from it, and a corrupt file stops the next
campaign before it writes anything."""
import json

import pytest

from nnfuzz.fuzz.guidestate import FILE, GuideStateError
from nnfuzz.triage.bugstore import load_bug
from test_campaign import _fault_campaign
from nnfuzz.fuzz.runlog import read_log


@pytest.mark.parametrize("producers", [0, 1])
@pytest.mark.slow
def test_guide_state_is_kept_logged_and_resumed(tmp_path, producers):
    counters, cc = _fault_campaign(tmp_path, "wrong", time_s=90.0, max_tests=3, rerun=False, producers=producers)
    state = json.loads((cc.out / FILE).read_text())
    assert state["graphs"] >= 3 and state["op_dtype"] and state["edges"] is not None
    # one trigger per bug with a new signature: "wrong" diverges at the first node, localized there
    unique = [p.name for p in sorted(cc.out.iterdir()) if p.name.isdigit() and load_bug(p).meta.duplicate_of is None]
    assert [t["bug"] for t in state["triggers"]] == unique == ["0000", *unique[1:]]
    t = state["triggers"][0]
    assert t["from"] == "saved" and t["op"] in {r[0] for r in state["op_dtype"]}
    log = list(read_log(cc.out))
    [g] = [r["guide"] for r in log if "guide" in r]
    assert g["tests"] == counters.tests and g["op_dtype"] == len(state["op_dtype"]) > 0
    assert g["growth"]["op_dtype"] == g["op_dtype"] and g["triggers"] == len(unique)

    counters, cc = _fault_campaign(tmp_path, "wrong", time_s=90.0, max_tests=2, rerun=False, producers=producers)
    again = json.loads((cc.out / FILE).read_text())
    assert again["graphs"] >= state["graphs"] + 2 and len(again["op_dtype"]) >= len(state["op_dtype"])
    assert again["triggers"][0] == t
    g2 = [r["guide"] for r in read_log(cc.out) if "guide" in r][-1]
    assert g2["growth"]["graphs"] == g2["graphs"] - state["graphs"]


@pytest.mark.slow
def test_a_reduced_bug_gives_its_trigger_again(tmp_path):
    counters, cc = _fault_campaign(tmp_path, "wrong", time_s=90.0, max_tests=2, rerun=False, reduce=True, reduce_s=20.0)
    state = json.loads((cc.out / FILE).read_text())
    reduced = load_bug(cc.out / "0000")
    assert reduced.meta.reduced["nodes_after"] < reduced.meta.reduced["nodes_before"]
    [t] = [t for t in state["triggers"] if t["bug"] == "0000"]
    node = reduced.meta.first_divergent_node  # of the reduced graph: the trigger names its op
    assert t["from"] == "reduced" and node["op"].startswith(t["op"]), (t, node)


@pytest.mark.slow
def test_a_corrupt_guide_state_stops_the_campaign_and_loses_nothing(tmp_path):
    out = tmp_path / "bugs"
    out.mkdir()
    (out / FILE).write_text("{truncated")
    with pytest.raises(GuideStateError, match="mgen.guide=none"):
        _fault_campaign(tmp_path, "wrong", time_s=30.0, max_tests=1)
    assert (out / FILE).read_text() == "{truncated" and not (out / "campaign.jsonl").exists()
