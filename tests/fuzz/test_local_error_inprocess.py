"""A campaign judges each node's own error (fast tier: the in-process fake system). A system that computes
float64 in float32 is caught at the first node, within the end-to-end tolerance or not, and every folder
it saves is signed by that node; a right system's passes are never checked node by node."""
import json

from fake_backends import fake_campaign, folders

from nnfuzz.generate.policy import GenPolicy

OPS = ["Relu", "Add", "Mul", "Tanh", "Sigmoid"]


def test_float64_computed_in_float32_is_caught_at_its_source(tmp_path):
    out = tmp_path / "bugs"
    policy = GenPolicy(max_nodes=3, dtypes=["float64"], include=OPS, seed=3)
    counters, _ = fake_campaign(out, {"always": "f32"}, policy=policy, max_tests=6, keep_per_signature=0)
    metas = [json.loads((f / "meta.json").read_text()) for f in folders(out)]
    assert metas and counters.bugs_saved == len(metas), counters
    for m in metas:
        root = m["root_cause"]
        assert root["kind"] == "precision" and root["method"] == "local-error" and root["ulps"] > 1e6, root
        assert m["signature"] == f"fake-cpu | inconsistency | {root['system_op'] or root['op']} | precision"
    assert counters.checked >= sum("within tolerance" in m["summary"] for m in metas)


def test_a_right_system_is_not_checked_node_by_node(tmp_path):
    policy = GenPolicy(max_nodes=3, dtypes=["float64"], include=OPS, seed=3)
    counters, _ = fake_campaign(tmp_path / "bugs", {"always": None}, policy=policy, max_tests=6)
    assert counters.tests == 6 and counters.bugs_saved == 0 and counters.checked == 0 and counters.noise == 0
