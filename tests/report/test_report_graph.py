"""The report's graph drawing: layers, edges through skipped layers, the divergent node, a damaged graph
drawn as it is, and a folder without gir.json drawn from model.onnx."""
import json
import re

import onnx
import pytest
from report_stores import KEPT

from nnfuzz.report.graph import GraphDrawError, _layout, draw, from_gir_json, from_onnx


def _gir(insts, inputs=("x",), outputs=None):
    tv = {"shape": [2], "dtype": "float32"}
    names = set(inputs) | {o for i in insts for o in i[2]}
    return {"version": 1, "vars": {n: tv for n in names}, "inputs": list(inputs), "weights": [],
            "insts": [{"op": {"op": op, "kwargs": kw}, "inputs": list(ins), "outputs": list(outs)}
                      for op, ins, outs, kw in [(i[0], i[1], i[2], i[3] if len(i) > 3 else {}) for i in insts]],
            "outputs": outputs or [insts[-1][2][0]]}


def test_layers_and_an_edge_through_a_skipped_layer():
    nodes = from_gir_json(_gir([("Neg", ["x"], ["a"]), ("Exp", ["a"], ["b"]), ("Add", ["x", "b"], ["c"])]), "b")
    layers, _, chains = _layout(nodes)
    assert [[s for s in layer if s < len(nodes)] for layer in layers] == [[0], [1], [2], [3]]
    assert [len(c) for _, _, c in chains] == [0, 0, 2, 0]  # x -> Add passes layers 1 and 2
    assert nodes[2].divergent and nodes[3].output and not nodes[1].output
    svg = draw(nodes, "t")
    assert svg.count('<g class="node') == 4 and svg.count('class="edge"') == 4
    assert "Exp" in svg and 'class="node op divergent"' in svg


def test_a_damaged_graph_is_drawn_as_it_is_or_refused_with_why():
    nodes = from_gir_json(_gir([("Neg", ["nowhere"], ["a"])], outputs=["a"]))
    assert [n.title for n in nodes] == ["x", "nowhere ?", "Neg"]
    with pytest.raises(GraphDrawError, match="not a GraphIR object"):
        from_gir_json({"vars": {}, "inputs": [], "weights": [], "insts": [{"op": "Neg"}]})
    label = draw(from_gir_json(_gir([("A" * 200, ["x"], ["a"], {"k": "<b>" * 50})])), "t")
    assert "<b>" not in label and max(len(t) for t in re.findall(r">([^<]+)</text>", label)) <= 44


def test_a_model_without_gir_json_is_drawn_from_onnx():
    nodes = from_onnx(onnx.load(str(KEPT / "0003" / "model.onnx")))
    ops = [n.title for n in nodes if n.kind == "op"]
    assert ops and all(n.kind in ("input", "weight", "op") for n in nodes)
    assert draw(nodes, "o").count('<g class="node') == len(nodes)
    gir = json.loads((KEPT / "0003" / "gir.json").read_text())
    assert len(ops) >= len(gir["insts"])
