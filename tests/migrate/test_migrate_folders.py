"""`nnfuzz migrate` writes folders the bug-folder loader reads; their expected outputs are what ONNX Runtime
computes for a few fixed cases; drops are counted by reason; NaN/Inf expected outputs are undefined."""
import json

import numpy as np
import pytest

from nnfuzz.migrate.onnx_node import disagreement
from nnfuzz.triage.bugstore import load_bug
from nnfuzz.verdict import DEFAULT_TOLERANCES

ORT_CASES = ["onnx-node/test_abs", "onnx-node/test_add", "onnx-node/test_relu", "onnx-node/test_softmax_axis_0",
             "onnx-node/test_softmax_axis_0_expanded", "torch-opinfo/abs_float32_0", "torch-opinfo/sum_int64_0",
             "torch-opinfo/nn.functional.conv2d_float32_0", "torch-opinfo/cat_float32_0"]


def _ort(bug):
    import onnxruntime as ort

    sess = ort.InferenceSession(bug.model_bytes, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, dict(bug.oracle["input"]))))


@pytest.mark.parametrize("folder", ORT_CASES)
def test_folder_loads_and_ort_reproduces_the_expected_outputs(corpus, folder):
    bug = load_bug(corpus / folder)
    mig = bug.meta.migration
    assert mig["source"] == folder.split("/")[0] and bug.meta.ops == [mig["operator"]]
    assert bug.meta.oracle["expected"]["system"] == {"onnx-node": "onnx-node-test",
                                                     "torch-opinfo": "torch-eager"}[mig["source"]]
    assert [t["name"] for t in mig["inputs"]] == list(bug.oracle["input"])
    expected = bug.oracle["output"]
    assert expected and disagreement(expected, _ort(bug), DEFAULT_TOLERANCES) == ""


def test_records_name_the_test_operator_attributes_and_dtypes(corpus):
    mig = load_bug(corpus / "onnx-node/test_softmax_axis_0").meta.migration
    assert (mig["test"], mig["operator"], mig["attributes"], mig["nodes"]) == ("test_softmax_axis_0", "Softmax",
                                                                                {"axis": 0}, 1)
    assert mig["inputs"][0]["dtype"] == "float32" and mig["inputs"][0]["shape"] == [3, 4, 5]
    expanded = load_bug(corpus / "onnx-node/test_softmax_axis_0_expanded").meta.migration
    assert expanded["operator"] == "Softmax/expanded" and expanded["nodes"] > 1 and expanded["attributes"] == {"axis": 0}
    conv = load_bug(corpus / "torch-opinfo/nn.functional.conv2d_float32_0").meta
    assert conv.migration["operator"] == "nn.functional.conv2d" and conv.opset == 17
    assert "Conv" in {n.op_type for n in __import__("onnx").load_from_string(
        (corpus / "torch-opinfo/nn.functional.conv2d_float32_0/model.onnx").read_bytes()).graph.node}


def test_nan_or_inf_in_the_expected_outputs_is_undefined(corpus):
    bug = load_bug(corpus / "onnx-node/test_reduce_max_empty_set")
    assert bug.meta.migration["undefined"] is True and bug.oracle["output"] is None
    assert load_bug(corpus / "onnx-node/test_abs").meta.migration["undefined"] is False


def test_summary_counts_every_collected_test_once(corpus, summary):
    onnx_s, torch_s = summary["onnx-node"], summary["torch-opinfo"]
    for s in (onnx_s, torch_s):
        assert s["collected"] == s["migrated"] + sum(s["dropped"].values())
        folders = [p for p in (corpus / s["source"]).iterdir() if p.is_dir()]
        assert len(folders) == s["migrated"]
    assert onnx_s["dropped"]["dtype-outside-nnfuzz"] >= 2         # test_add_uint32/64
    assert (corpus / "onnx-node" / "test_add_uint16").is_dir()    # uint16 is an nnfuzz dtype (quantized tensors)
    assert onnx_s["dropped"]["non-tensor-io"] >= 2                # test_identity_sequence, test_identity_opt
    assert onnx_s["dropped"]["nondeterministic"] >= 2             # test_bernoulli*: random draws
    assert onnx_s["undefined"] >= 1
    assert torch_s["dropped"]["non-tensor-output"] >= 1           # item returns a Python number
    assert not (corpus / "onnx-node/test_add_uint32").exists()
    assert not (corpus / "onnx-node/test_bernoulli").exists()


def test_random_draws_are_not_migrated(tmp_path):
    """Training-mode Dropout's recorded mask is one draw (the reference evaluator repeats it from the op's
    seed attribute; ORT draws its own): an ort-cpu campaign reported it as an inconsistency."""
    from nnfuzz.cli import main

    assert main(["migrate", "source=onnx-node", f"out={tmp_path}", "ui=plain", "migrate.ops=[Dropout]"]) == 0
    kept = {p.name for p in (tmp_path / "onnx-node").iterdir() if p.is_dir()}
    assert "test_training_dropout_mask" not in kept and "test_training_dropout" not in kept
    assert {"test_dropout_default", "test_training_dropout_zero_ratio"} <= kept  # inference mode, ratio 0


def test_priority_order_lists_every_folder_of_both_sources(corpus):
    doc = json.loads((corpus / "priority.json").read_text())
    folders = [t["folder"] for t in doc["tests"]]
    on_disk = sorted(p.parent.relative_to(corpus).as_posix() for p in corpus.glob("*/*/meta.json"))
    assert sorted(folders) == on_disk and len(set(folders)) == len(folders)
    scores = [t["score"] for t in doc["tests"]]
    assert scores[0] == max(scores)
    assert {f.split("/")[0] for f in folders} == {"onnx-node", "torch-opinfo"}
