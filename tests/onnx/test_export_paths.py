"""The two ONNX paths behind one function, the opset draw and retry, and the drawn spellings: recorded,
reproducible, and kept by the nodes a cut-down graph keeps."""
import numpy as np
import pytest

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.errors import ConfigError
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.onnx.direct import Unspellable, build_onnx
from nnfuzz.materialize.onnx.spec import FIRST_OPSET, ExportSpec, newest_opset
from nnfuzz.ops.bitwise import spec as K
from nnfuzz.ops.elementwise import spec as E

ort = pytest.importorskip("onnxruntime")


def _chain(dtype=DType.float32, n=3, weight=False):
    """Relu and LeakyRelu in turn from ``x`` (from a weight ``w`` with ``weight``)."""
    g = GraphIR()
    prev = "w" if weight else "x"
    g.vars[prev] = AbsTensor([2, 3], dtype)
    (g.weights if weight else g.inputs).append(prev)
    for k in range(n):
        g.vars[f"v{k}"] = AbsTensor([2, 3], dtype)
        g.insts.append(Inst(E.Relu() if k % 2 == 0 else E.LeakyRelu(negative_slope=0.25), [prev], [f"v{k}"]))
        prev = f"v{k}"
    g.outputs = [prev]
    return g.check()


@pytest.mark.parametrize("bad, match", [
    (dict(via="tflite"), "export.via='tflite'; valid choices"),
    (dict(opset=12), "export.opset=12; nnfuzz writes opsets 13.."),
    (dict(opset=newest_opset() + 1), f"export.opset={newest_opset() + 1}"),
    (dict(spelling="fancy"), "export.spelling='fancy'"),
    (dict(via="torch", opset=None), "export.via=torch writes one opset"),
])
def test_a_bad_export_setting_names_the_value_and_the_choices(bad, match):
    with pytest.raises(ConfigError, match=match):
        ExportSpec(**bad)


def test_the_same_seed_writes_the_same_bytes_and_another_seed_draws_other_opsets():
    g = _chain()
    spec = ExportSpec(opset=None, opsets=(FIRST_OPSET, newest_opset()))
    a = build_model(g, 5, export=spec.for_model(5)).onnx.SerializeToString()
    b = build_model(g, 5, export=spec.for_model(5)).onnx.SerializeToString()
    assert a == b
    opsets = {spec.for_model(s).opset for s in range(40)}
    assert len(opsets) > 5 and min(opsets) >= FIRST_OPSET and max(opsets) <= newest_opset()


def test_a_node_the_opset_cannot_write_moves_the_model_to_an_opset_that_can():
    g = GraphIR()
    for v in ("x", "y", "z"):
        g.vars[v] = AbsTensor([2, 3], DType.int32)
    g.inputs, g.outputs, g.insts = ["x", "y"], ["z"], [Inst(K.BitwiseAnd(), ["x", "y"], ["z"])]  # ONNX opset 18
    proto, used, _ = build_onnx(g.check(), {}, ExportSpec(opset=13, opsets=(13, 20)))
    assert 18 <= used.opset <= 20 and proto.opset_import[0].version == used.opset
    with pytest.raises(Unspellable, match="BitwiseAnd\\(int32, int32\\) cannot be written at opset 13 \\(needs 18\\)"):
        build_onnx(g, {}, ExportSpec(opset=13, opsets=(13, 17)))


def test_spellings_are_recorded_per_node_and_kept_by_a_cut_graph():
    g = _chain(n=6, weight=True)
    w = {"w": np.ones((2, 3), np.float32)}
    spec = ExportSpec(opset=18, seed=3)
    seen = {}
    for seed in range(12):
        _, _, drawn = build_onnx(g, w, ExportSpec(opset=18, seed=seed))
        for var, d in drawn.items():
            assert var in g.vars, f"spellings are keyed by the instruction's output var, got {var!r}"
            for key, choice in d.items():
                seen.setdefault(key, set()).add(choice)
    assert seen, "no spelling was drawn over 12 seeds"
    assert any(len(v) > 1 for v in seen.values()), f"every draw gave one choice: {seen}"
    _, _, full = build_onnx(g, w, spec)
    cut = GraphIR(vars=dict(g.vars), weights=["w"], insts=g.insts[:3], outputs=["v2"]).check()
    _, _, part = build_onnx(cut, w, spec)
    assert part == {v: d for v, d in full.items() if v in ("w", "v0", "v1", "v2")}


def test_both_paths_compute_the_reference_on_ort():
    g = _chain(n=4)
    for spec in (ExportSpec(via="torch", opset=17), ExportSpec(opset=None).for_model(1), ExportSpec(opset=13)):
        m = build_model(g, 0, export=spec)
        assert m.export.via == spec.via
        (got,) = ort.InferenceSession(m.onnx.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, m.oracle.input)
        np.testing.assert_allclose(got, m.oracle.output["v3"], rtol=1e-6)


def test_torch_exporter_writes_a_valid_bfloat16_thresholded_relu():
    """zeros_like in the torch lowering was exported as a bfloat16 ConstantOfShape, which opset 17 lacks:
    a campaign with export.via=torch counted it as an nnfuzz error on every such graph."""
    from nnfuzz.generate import GenPolicy
    from nnfuzz.generate.symbolic import GraphGenerator
    from nnfuzz.materialize.model import build_model
    from nnfuzz.materialize.onnx.spec import ExportSpec
    from nnfuzz.ops.activation.spec import ThresholdedRelu

    gir = GraphGenerator(GenPolicy(max_nodes=1, dtypes=("bfloat16",), seed=0), [ThresholdedRelu]).generate()
    model = build_model(gir, 0, export=ExportSpec(via="torch", opset=17))
    assert "ConstantOfShape" not in {n.op_type for n in model.onnx.graph.node}


def test_bitshift_is_not_offered_to_torchs_exporter():
    """torch's exporter writes a signed right shift as a division (rounds toward zero, the shift floors):
    a campaign with export.via=torch reported that as ORT's inconsistency."""
    from nnfuzz.generate.opset import usable_with
    from nnfuzz.ops.bitwise.spec import BitShift

    assert not usable_with({"torch"}, "torch")(BitShift)
    assert usable_with({"torch"}, "onnx")(BitShift)
