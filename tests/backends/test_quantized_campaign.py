"""QDQ graphs in a real campaign (docs/quantization.md): an ort-cpu campaign with mgen.quantized builds them,
writes them at the opsets where ONNX Runtime runs QuantizeLinear (it reads opset 28 but has no
QuantizeLinear(28): fuzz/qdq_opsets.py; the row probe keeps QuantizeLinear, which fails at 28 but runs at 13)
and counts them in its summary."""
import json

import pytest

from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
from nnfuzz.generate.policy import GenPolicy

QDQ_OPS = ["Conv2d", "MatMul", "Add", "Relu", "Sigmoid", "MaxPool2d", "AvgPool2d", "Concat", "Reshape",
           "QuantizeLinear", "DequantizeLinear"]


@pytest.mark.slow
def test_an_ort_campaign_builds_and_counts_qdq_graphs(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))  # probed afresh, beside nobody's cache
    policy = GenPolicy(max_nodes=5, seed=3, include=QDQ_OPS, dtypes=["float32", "int8", "uint8", "int64"],
                       quantized=1.0)
    cc = CampaignConfig(backend="ort-cpu", backend_options={}, policy=policy, out=tmp_path / "bugs", ui="plain",
                        time_s=120, max_tests=6, executor="inprocess", reduce=False, known_kept=False)
    counters = run_campaign(cc)
    assert counters.tests == 6 and counters.quantized >= 4, counters
    lines = [json.loads(x) for x in (cc.out / "campaign.jsonl").read_text().splitlines()]
    plan = next(x["campaign"]["plan"] for x in lines if "campaign" in x)
    assert plan["quantized"] == 1.0 and plan["qdq_opset"] == 27  # ORT 1.32: QuantizeLinear up to opset 27
    tested = [x for x in lines if x.get("quantized")]
    assert tested and all(x["opset"] <= 27 and {"QuantizeLinear", "DequantizeLinear"} <= set(x["ops"]) for x in tested)
    assert all(x["quantized"]["pairs"] >= 1 for x in tested)
    assert counters.verdicts.get("inconsistency", 0) == 0, dict(counters.verdicts)
    assert {x["quantized"]["activations"] for x in tested} <= {"int8", "uint8"}  # mgen.dtypes has no other
    assert {x["quantized"]["weights"] for x in tested} == {"int8"}


@pytest.mark.slow
def test_an_ort_campaign_draws_the_wider_qdq_types(tmp_path, monkeypatch):
    """With mgen.dtypes holding them, the QDQ graphs draw 16-bit activations and int4 weights (ONNX Runtime runs
    them: they are probed at opset 21, where they came), and those with 16-bit activations are written at
    opsets 21 to 27 (the QDQ cap), and pass."""
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    policy = GenPolicy(max_nodes=5, seed=5, include=QDQ_OPS, quantized=1.0,
                       dtypes=["float32", "int8", "uint8", "int16", "uint16", "int4", "int64"])
    cc = CampaignConfig(backend="ort-cpu", backend_options={}, policy=policy, out=tmp_path / "bugs", ui="plain",
                        time_s=150, max_tests=10, executor="inprocess", reduce=False, known_kept=False)
    counters = run_campaign(cc)
    lines = [json.loads(x) for x in (cc.out / "campaign.jsonl").read_text().splitlines()]
    plan = next(x["campaign"]["plan"] for x in lines if "campaign" in x)
    assert plan["qdq_blocked"] is True
    tested = [x for x in lines if x.get("quantized")]
    wide = [x for x in tested if x["quantized"]["activations"] in ("int16", "uint16")]
    assert wide and all(21 <= x["opset"] <= 27 and x["verdict"] == "pass" for x in wide), \
        [(x["quantized"], x["opset"], x["verdict"]) for x in tested]
    assert "int4" in {x["quantized"]["weights"] for x in tested}
    assert counters.verdicts.get("inconsistency", 0) == 0, dict(counters.verdicts)

