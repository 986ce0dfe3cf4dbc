"""Disruptive mode's invalid models (nnfuzz/materialize/onnx/invalid.py): each breaks exactly one rule
of one node, named by ONNX's own checker, and is drawn from the seed; every rule applies somewhere."""
import collections

import onnx
import pytest

from nnfuzz.errors import NNFuzzError
from nnfuzz.generate import generate_graph
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.onnx.invalid import RULES, NoViolation, make_invalid
from nnfuzz.materialize.onnx.spec import ExportSpec

POLICY = GenPolicy(max_nodes=7, dtypes=["float32", "int32", "int64", "bool"])


def _models(n):
    for seed in range(n):
        try:
            gir = generate_graph(POLICY, seed=seed)
            yield seed, build_model(gir, seed, export=ExportSpec(opset=None).for_model(seed)).onnx
        except NNFuzzError:
            continue


def test_each_invalid_model_breaks_one_named_node_and_the_checker_says_so():
    rules = collections.Counter()
    for seed, model in _models(40):
        try:
            bad, record = make_invalid(model, seed)
        except NoViolation:
            continue
        rules[record["rule"]] += 1
        assert record["rule"] in RULES and record["node"] in record["checker"]
        with pytest.raises(Exception) as e:
            onnx.checker.check_model(bad, full_check=True)
        assert record["node"] in str(e.value)
        onnx.checker.check_model(model, full_check=True)  # the original stays valid (a copy was changed)
        again, _ = make_invalid(model, seed)
        assert again.SerializeToString() == bad.SerializeToString()
    assert sum(rules.values()) >= 30 and len(rules) >= 4, rules


def test_a_model_with_nothing_to_break_says_why():
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    model = helper.make_model(helper.make_graph([], "empty", [x], [x]), opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(NoViolation, match="no node to break"):
        make_invalid(model, 0)
