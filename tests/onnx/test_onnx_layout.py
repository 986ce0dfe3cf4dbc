"""The ONNX lowerings of the layout, combine and pad families on the cases where their spellings
differ most: each case is written at several opsets with many drawn spellings; every model passes the
full checker and strict shape inference, ONNX's ReferenceEvaluator agrees exactly with torch and the
numpy reference, and the spellings the case exists for were drawn (and the ones it must not use were
not)."""
import numpy as np
import pytest

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.onnx.direct import build_onnx
from nnfuzz.materialize.onnx.export import check_onnx
from nnfuzz.materialize.onnx.spec import ExportSpec
from nnfuzz.ops.combine import spec as C
from nnfuzz.ops.layout import spec as L
from nnfuzz.ops.pad import spec as P
from nnfuzz.reference import evaluate

onnx_ref = pytest.importorskip("onnx.reference")
SEEDS = range(16)


def _single(op, shape, dtype=DType.float32):
    g = GraphIR()
    g.vars["x"] = AbsTensor(list(shape), dtype)
    outs = op.checked_type_transfer([g.vars["x"]])
    names = [f"y{k}" for k in range(len(outs))]
    g.vars.update(zip(names, outs))
    g.inputs, g.outputs, g.insts = ["x"], names, [Inst(op, ["x"], names)]
    return g.check()


def _written(op, shape, opsets, dtype=DType.float32):
    """Every model of ``op`` on ``shape`` at ``opsets`` x SEEDS, checked; returns [(opset, drawn, proto)]."""
    gir = _single(op, shape, dtype)
    x = (np.arange(int(np.prod(shape))) % 7 + 1).reshape(shape).astype(dtype.numpy())
    torch_out = build_model(gir, 0, export=False, values=({}, {"x": x})).oracle.output
    numpy_out = evaluate(gir, {}, {"x": x})
    models = []
    for opset in opsets:
        for seed in SEEDS:
            proto, used, drawn = build_onnx(gir, {}, ExportSpec(opset=opset, spelling="random", seed=seed))
            what = f"{op!r} on {list(shape)} at opset {used.opset}, {drawn}"
            check_onnx(proto, [gir.vars[o] for o in gir.outputs], gir.outputs, where=what)
            got = onnx_ref.ReferenceEvaluator(proto).run(None, {"x": x})
            for name, y in zip(gir.outputs, got):
                np.testing.assert_array_equal(y, torch_out[name], err_msg=f"{what}: vs torch")
                np.testing.assert_array_equal(y, numpy_out[name], err_msg=f"{what}: vs numpy")
            models.append((used.opset, drawn.get(gir.outputs[0], {}), proto))
    return models


def _seen(models, key):
    return {d[k] for _, d, _ in models for k in d if k.rstrip("0123456789") == key}


def _const(proto, name):
    """The values of the initializer or Constant node ``name``."""
    from onnx import numpy_helper

    for t in proto.graph.initializer:
        if t.name == name:
            return numpy_helper.to_array(t).tolist()
    for n in proto.graph.node:
        if n.op_type == "Constant" and n.output[0] == name:
            return numpy_helper.to_array(n.attribute[0].t).tolist()
    raise KeyError(f"{name} is not a constant of the model")


def _node_types(proto):
    return {n.op_type for n in proto.graph.node}


def test_reshape_draws_copies_inference_and_allowzero():
    models = _written(L.Reshape(2, 3, 4), [2, 12], [13, 14, 28])
    assert _seen(models, "reshape_zero") == {"dims", "0 copies"}
    assert _seen(models, "reshape_infer") == {"dims", "-1"}
    assert _seen(models, "allowzero") == {"None", "0", "1"}
    assert all(o >= 14 for o, d, _ in models if "allowzero" in d)
    assert _seen(models, "shape") == {"constant", "computed"}


def test_split_uses_num_outputs_only_where_the_uneven_rule_gives_the_sizes():
    fits = _written(C.Split(0, 3, 3, 1), [7, 2], [13, 18])
    assert "implied" in _seen(fits, "split_sizes")
    assert all(o >= 18 for o, d, _ in fits if d.get("split_sizes") == "implied")  # 7 is not 3 equal parts
    other = _written(C.Split(0, 2, 2, 3), [7], [18, 28])
    attrs = {a.name for _, _, p in other for n in p.graph.node if n.op_type == "Split" for a in n.attribute}
    assert "num_outputs" not in attrs and "split_sizes" not in {k for _, d, _ in other for k in d}
    even = _written(C.Split(1, 2, 2), [3, 4], [13])
    assert "implied" in _seen(even, "split_sizes") and "Slices" in _seen(even, "split")


def test_slice_spellings():
    models = _written(C.Slice(0, 1, 5, 2), [5, 3], [13])
    assert _seen(models, "slice_end") == {"given", "INT_MAX"} and _seen(models, "slice_start") == {"given", "negative"}
    assert _seen(models, "slice_axes") == {"omitted", "given"}
    assert _seen(models, "slice_index") == {"int64", "int32"}
    inner = _written(C.Slice(1, 0, 2, 1), [2, 4, 3], [13])
    assert {"given", "leading"} <= _seen(inner, "slice_axes") and "negative" in _seen(inner, "slice_end")
    assert _seen(inner, "slice_start") == {"given", "negative", "INT_MIN"}


def test_gather_negative_indices():
    models = _written(C.Gather(1, 0, 2, 2, 1), [2, 3], [13], DType.int32)
    assert _seen(models, "indices") == {"positive", "negative", "mixed"}


def test_squeeze_omits_axes_only_when_the_axis_is_the_only_one_dim():
    alone = _written(L.Squeeze(1), [3, 1, 2], [13, 21])
    assert _seen(alone, "squeeze") == {"axes", "Reshape", "all"}
    two = _written(L.Squeeze(2), [1, 3, 1], [13])
    assert "all" not in _seen(two, "squeeze")


def test_flatten_axis_zero_and_one():
    assert "Flatten+Squeeze" in _seen(_written(L.Flatten(axis=0), [2, 3], [13]), "flatten")
    assert "Flatten" in _seen(_written(L.Flatten(axis=1), [2, 3, 2], [13]), "flatten")


def test_expand_writes_ones_and_shorter_targets():
    models = _written(L.Expand(2, 3, 4), [2, 1, 4], [13])
    assert _seen(models, "expand_ones") == {"dims", "1 where kept"} and "shorter" in _seen(models, "expand_rank")


def test_triangles_are_masks_before_trilu():
    for op in (L.Tril(-1), L.Triu(2)):
        models = _written(op, [2, 3, 4], [13, 14, 28], DType.bool)
        assert "Trilu" not in {t for o, _, p in models if o == 13 for t in _node_types(p)}
        assert _seen(models, "trilu") == {"Trilu", "Where", "Where(not mask)", "And"}


def test_flip_roll_and_zero_roll():
    flips = _written(L.Flip(1), [2, 5], [13])
    assert _seen(flips, "flip") == {"Slice", "Gather"} and _seen(flips, "slice_axes") == {"given", "leading"}
    assert _seen(_written(L.Roll(-2, 0), [5, 2], [13]), "roll") == {"Slice+Concat", "Gather"}
    assert all(_node_types(p) == {"Identity"} for _, _, p in _written(L.Roll(0, 0), [3], [13]))


def test_depth_to_space_both_modes_and_space_to_depth():
    assert "DepthToSpace" in _seen(_written(L.DepthToSpace(2), [1, 8, 2, 3], [13]), "depth_to_space")
    dcr = _written(L.DepthToSpaceDCR(2), [2, 8, 2, 3], [13, 28], DType.int32)
    assert _seen(dcr, "depth_to_space") == {"DepthToSpace", "mode=DCR", "Reshape+Transpose"}
    assert "SpaceToDepth" in _seen(_written(L.SpaceToDepth(2), [1, 3, 4, 2], [13]), "space_to_depth")


def test_cropping_constant_pad():
    for op, shape in [(P.ConstantPad(-1, 2, 0, -1, value=1.0), [3, 4]), (P.ConstantPad(-3, 1, value=0.0), [2, 3])]:
        models = _written(op, shape, [13, 18])
        pads = [_const(p, n.input[1]) for _, _, p in models for n in p.graph.node if n.op_type == "Pad"]
        assert pads and all(v >= 0 for pad in pads for v in pad), pads  # the crop is done by Slices


def test_pad_axes_input_and_wrap_by_opset():
    models = _written(P.ReplicatePad(1, 0, 2, 1), [1, 2, 3, 2], [13, 18])
    assert _seen(models, "pad_axes") == {"all axes", "axes input"}
    assert all(o >= 18 for o, d, _ in models if d.get("pad_axes") == "axes input")
    circ = _written(P.CircularPad(2, 1, 0, 3), [1, 2, 3, 2], [13, 18, 19, 28], DType.bool)
    wraps = [o for o, _, p in circ for n in p.graph.node if n.op_type == "Pad"]
    assert wraps and min(wraps) >= 19
    assert _seen(circ, "circular") == {"wrap", "Slice+Concat"}
