"""`nnfuzz stats`: the metrics on a hand-built corpus whose values are computed by hand (docs/stats.md),
the readers (GraphIR and ONNX), and the command's output and errors."""
import json
from fractions import Fraction

import onnx
import pytest
from onnx import TensorProto, helper

from nnfuzz.cli import main
from nnfuzz.stats import Graph, Node, OpCorpus, compute
from nnfuzz.stats.corpus import from_onnx

F = "float32"


def _corpus():
    a1 = Node("A", (F,), ((2, 3),), (("k", 1),))
    g1 = Graph([a1, Node("B", (F, F), ((2, 3), (2, 3))), Node("C", (F,), ((2, 3),))], [(0, 1), (1, 2), (0, 2)])
    g2 = Graph([a1, Node("A", (F,), ((4,),), (("k", 1),)), Node("B", (F, F, F), ((2, 3), (4,), (4,)))],
               [(0, 2), (1, 2)])
    ops = OpCorpus("hand", {"A": frozenset({1}), "B": frozenset({2, 3, 4}), "C": frozenset({1})},
                   {"A": 1, "B": 2, "C": 2})
    return [g1, g2], ops


def test_metrics_of_a_hand_built_corpus():
    graphs, ops = _corpus()
    m = compute(graphs, ops)
    # per graph: g1 has 3 ops, 3 types, pairs AB BC AC, one triple A->B->C, 3 settings; g2: 3 ops, 2 types,
    # one pair AB, no triple, 3 settings
    assert (m["NOO"], m["NOT"], m["NOP"], m["NTR"], m["NSA"]) == (3, 2.5, 2, 0.5, 3)
    assert m["OTC"] == 1
    assert Fraction(m["IDC"]).limit_denominator(100) == Fraction(8, 9)  # A 1/1, B {2,3} of {2,3,4}, C 1/1
    assert Fraction(m["ODC"]).limit_denominator(100) == Fraction(5, 3)  # A {2,1}, B {1,0}, C {0}
    assert m["SEC"] == pytest.approx(3 / 9) and m["DEC"] == pytest.approx(1 / 27)
    assert Fraction(m["SAC"]).limit_denominator(100) == Fraction(5, 3)  # A 2 settings, B 2, C 1
    assert (m["op_x_dtype"], m["op_x_dtype_share"]) == (4, 4 / 5)
    assert (m["edges"], m["triples"], m["op_types"]) == (3, 1, 3)


def test_an_op_outside_the_corpus_is_named_not_counted():
    graphs, ops = _corpus()
    graphs[1].nodes.append(Node("Z", (F,), ((1,),)))
    graphs[1].edges.append((2, 3))
    m = compute(graphs, ops)
    assert m["outside_corpus"] == ["Z"] and m["OTC"] == 1 and m["edges"] == 3


def _onnx_model():
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Constant", [], ["c"], value=helper.make_tensor("v", f, [1], [2.0])),
             helper.make_node("Mul", ["x", "c"], ["m"]), helper.make_node("Relu", ["m"], ["r"]),
             helper.make_node("Add", ["m", "r"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", f, [2, 3])],
                          [helper.make_tensor_value_info("y", f, [2, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_reader_leaves_constants_out_and_follows_values():
    g = from_onnx(_onnx_model())
    assert [n.op for n in g.nodes] == ["Mul", "Relu", "Add"]
    assert sorted(g.edges) == [(0, 1), (0, 2), (1, 2)]
    assert g.nodes[0].in_shapes == ((2, 3), (1,)) and g.nodes[2].in_dtypes == (F, F)


def _write(root, name, model):
    (root / name).mkdir(parents=True)
    onnx.save(model, str(root / name / "model.onnx"))


def test_command_prints_json_for_two_corpora(tmp_path, capsys):
    _write(tmp_path / "a", "0000", _onnx_model())
    _write(tmp_path / "b", "0000", _onnx_model())
    _write(tmp_path / "b", "0001", _onnx_model())
    assert main(["stats", str(tmp_path / "a"), str(tmp_path / "b"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_C"] == 3 and [c["metrics"]["graphs"] for c in out["corpora"]] == [1, 2]
    assert out["corpora"][0]["metrics"]["SEC"] == pytest.approx(3 / 9)


def test_command_on_generated_models_reads_graphs(tmp_path, capsys):
    assert main(["generate", "n=3", f"out={tmp_path / 'gen'}", "ui=plain", "mgen.max_nodes=4"]) == 0
    capsys.readouterr()
    assert main(["stats", str(tmp_path / "gen"), "--json"]) == 0
    m = json.loads(capsys.readouterr().out)["corpora"][0]["metrics"]
    assert m["graphs"] == 3 and m["NOO"] <= 4 and m["op_corpus"] == "nnfuzz's registered ops"


def test_command_errors_are_clear(tmp_path, capsys):
    assert main(["stats", str(tmp_path / "missing")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["stats", str(tmp_path / "empty")]) == 2
    assert "holds no readable model" in capsys.readouterr().err
    (tmp_path / "bad" / "0000").mkdir(parents=True)
    (tmp_path / "bad" / "0000" / "model.onnx").write_bytes(b"not a model")
    assert main(["stats", str(tmp_path / "bad")]) == 2
    assert "cannot be read as a model" in capsys.readouterr().err
    assert main(["stats", str(tmp_path), "--frobnicate"]) == 2


def test_corpora_read_at_different_levels_do_not_compare(tmp_path, capsys):
    assert main(["generate", "n=1", f"out={tmp_path / 'gen'}", "ui=plain", "mgen.max_nodes=3"]) == 0
    _write(tmp_path / "other", "0000", _onnx_model())
    capsys.readouterr()
    assert main(["stats", str(tmp_path / "gen"), str(tmp_path / "other")]) == 2
    assert "--from=onnx" in capsys.readouterr().err
    assert main(["stats", str(tmp_path / "gen"), str(tmp_path / "other"), "--from=onnx", "--json"]) == 0
