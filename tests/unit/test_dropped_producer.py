"""A crash on a value whose producer the system's passes removed names that producer's op (crash_prefix.py,
method "dropped"): ORT says only "Node input 'v0' is not a graph input, ..." for kept 0001 (a Softplus fused
away), kept 0019 (a Pad folded into a Conv's weight) and the LayerNorm fusion (a Div), and a campaign counted
the last two as kept 0001 by that message."""
import json
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from nnfuzz.gir import GraphIR
from nnfuzz.triage.crash_prefix import dropped_root
from nnfuzz.triage.dedup import signature
from nnfuzz.triage.known import load_known
from nnfuzz.triage.meta import BugMeta

KEPT = Path(__file__).resolve().parents[2] / "bugs" / "kept"
MESSAGE = ("InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Invalid model. Node input '{v}' is not a "
           "graph input, initializer, or output of a previous node.")


def _kept(name):
    d = KEPT / name
    meta = json.loads((d / "meta.json").read_text())
    return d, meta, (d / "err.log").read_text()


@pytest.mark.parametrize("name, op", [("0001", "Softplus"), ("0019", "Pad")])
def test_the_kept_fusion_crashes_name_the_op_whose_node_was_removed(name, op):
    d, meta, err = _kept(name)
    root = dropped_root(meta["summary"], "ort-cpu", GraphIR.loads((d / "gir.json").read_text()),
                        onnx.load(str(d / "model.onnx")))
    assert (root["method"], root["op"]) == ("dropped", op)
    assert meta["root_cause"] == root  # as kept/NNNN/meta.json records it
    assert signature(meta, err).endswith(f"is not a graph input, initializer, or output of a previous node. | dropped {op}")


def _div_model():
    x = helper.make_tensor_value_info("i0", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("o", TensorProto.FLOAT, [4])
    nodes = [helper.make_node("Div", ["i0", "i0"], ["v0"]), helper.make_node("Mul", ["v0", "i0"], ["o"])]
    return helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)])


def test_another_fusion_with_the_same_message_is_not_counted_as_a_kept_one():
    root = dropped_root(MESSAGE.format(v="v0"), "ort-cpu", None, _div_model())
    assert (root["op"], root["var"], root["index"]) == ("Div", "v0", None)
    d, kept, err = _kept("0001")
    new = BugMeta.from_json({**kept, "summary": MESSAGE.format(v="v0"), "root_cause": root})
    sig = signature(new, MESSAGE.format(v="v0"))
    assert sig.endswith("| dropped Div") and sig != signature(kept, err)
    known = load_known()
    assert known.match(new, sig, MESSAGE.format(v="v0")) is None  # neither kept 0001's folder nor its entry
    pad = BugMeta.from_json({**kept, "root_cause": {**root, "op": "Pad", "system_op": "Pad"}})
    assert known.match(pad, signature(pad, err), err) == "bugs/kept/0019"  # kept 0019's Pad, not kept 0001


def test_an_error_naming_no_value_or_a_value_no_node_gives_has_no_dropped_root():
    assert dropped_root("Fail: [ONNXRuntimeError] : 1 : FAIL : Node (Mul_3) Op (Mul)", "ort-cpu", None,
                        _div_model()) is None
    assert dropped_root(MESSAGE.format(v="i0"), "ort-cpu", None, _div_model()) is None  # a graph input
