"""Spellings the 10-minute campaigns drew that the ONNX checker rejected (nnfuzz errors, fixed in the
lowerings): every spelling of these nodes is drawn here, at old and new opsets, and checked."""
import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.onnx.direct import build_onnx
from nnfuzz.materialize.onnx.export import check_onnx
from nnfuzz.materialize.onnx.spec import ExportSpec
from nnfuzz.ops.combine import spec as C
from nnfuzz.ops.normalize import spec as M

SEEDS = range(16)


def _one(op, x_shape, out_shapes):
    g = GraphIR()
    g.vars["x"] = AbsTensor(list(x_shape), DType.float32)
    outs = [f"y{k}" for k in range(len(out_shapes))]
    g.vars.update({o: AbsTensor(list(s), DType.float32) for o, s in zip(outs, out_shapes)})
    g.inputs, g.outputs, g.insts = ["x"], outs, [Inst(op, ["x"], outs)]
    return g.check()


@pytest.mark.parametrize("sizes", [(1, 3), (3, 1), (2, 2), (1, 1, 2), (3, 3, 2), (2, 2, 2)])
def test_split_leaves_its_sizes_out_only_where_they_are_implied(sizes):
    """Split(sizes=[1, 3]) on a dim of 4 was written with the sizes left out ('equal parts') at opset < 18."""
    g = _one(C.Split(1, *sizes), [2, sum(sizes)], [[2, s] for s in sizes])
    x = np.arange(2 * sum(sizes), dtype=np.float32).reshape(2, -1)
    want = np.split(x, np.cumsum(sizes)[:-1], axis=1)
    for opset in (13, 17, 18, 28):
        for seed in SEEDS:
            proto, _, drawn = build_onnx(g, {}, ExportSpec(opset=opset, seed=seed))
            check_onnx(proto, [g.vars[o] for o in g.outputs], g.outputs, where=f"opset {opset} {drawn}")
            got = ReferenceEvaluator(proto).run(None, {"x": x})
            assert all(np.array_equal(a, b) for a, b in zip(got, want)), (opset, drawn)


def test_mean_variance_normalization_passes_the_checker_in_every_spelling():
    """The node with its default axes left out fails onnx's checker at every opset."""
    g = _one(M.MeanVarianceNormalization(axes=(0, 2, 3)), [2, 3, 4, 5], [[2, 3, 4, 5]])
    for opset in (13, 18, 28):
        for seed in SEEDS:
            proto, _, drawn = build_onnx(g, {}, ExportSpec(opset=opset, seed=seed))
            check_onnx(proto, [g.vars["y0"]], ["y0"], where=f"opset {opset} {drawn}")
