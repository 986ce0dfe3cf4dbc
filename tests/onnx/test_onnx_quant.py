"""The quant family (nnfuzz/ops/quant): for every op and every dtype it declares, single-op graphs with
drawn scales and zero points are written directly as ONNX at opsets 13, 19, 21 and the
newest, canonically and with drawn spellings; onnx's ReferenceEvaluator on each model agrees exactly with
the numpy reference, and so does the torch lowering (fake quantization) that computed the oracle.
Quantized outputs are compared exactly: the drawn values land within float rounding of a tie with a
probability of about 1e-6 per element, and every side rounds half to even.

A row with a quantized-tensor type (uint16, int4, uint4, float8: DType.quant_only) is generated as the
QuantizeLinear -> DequantizeLinear pair the generator always writes around it; its single-op model is cut
from the pair's ONNX model (``onnx.utils.Extractor``), with the quantized tensor as its output (the
QuantizeLinear) or its input (the DequantizeLinear, fed the numpy reference's value)."""
import numpy as np
import onnx
import onnx.utils
import pytest
from onnx_reference_fixes import REFERENCE_FIXES

from nnfuzz.abstract import OP_REGISTRY, load_builtin_ops
from nnfuzz.errors import ConstraintError
from nnfuzz.generate import generate_graph
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.onnx.direct import Unspellable, build_onnx
from nnfuzz.materialize.onnx.export import check_onnx
from nnfuzz.materialize.onnx.spec import FIRST_OPSET, ExportSpec, newest_opset
from nnfuzz.materialize.search import SearchConfig
from nnfuzz.reference import evaluate

onnx_ref = pytest.importorskip("onnx.reference")

load_builtin_ops()
OPS = sorted((c for c in OP_REGISTRY.values() if c.family == "quant"), key=lambda c: c.name)
GRAPHS_PER_CASE = 3
REFERENCE_SINCE = 19


def _quant_only(row) -> bool:
    return any(d.quant_only for d in row[0] + row[1])


def _the_inst(gir, cls, row):
    """The instruction of ``cls`` on ``row`` in ``gir``, or None."""
    for inst in gir.insts:
        if type(inst.op) is cls and (tuple(gir.vars[v].dtype for v in inst.inputs),
                                     tuple(gir.vars[v].dtype for v in inst.outputs)) == row:
            return inst
    return None


def quant_models(cls, row, seeds=range(80)):
    """(gir, model) of one-node graphs of ``cls`` on the dtype row ``row`` (input dtypes, output dtypes;
    every dtype allowed: the ops' rows mix float and integer types); for a row with a quantized-tensor type,
    QuantizeLinear -> DequantizeLinear pairs that hold it."""
    pair = _quant_only(row)
    ops = ["QuantizeLinear", "DequantizeLinear"] if pair else [cls.name]
    for seed in (range(2000) if pair else seeds):
        try:
            gir = generate_graph(GenPolicy(seed=seed, max_nodes=len(ops), include=ops, max_elems=256))
        except ConstraintError:
            continue
        if len(gir.insts) != len(ops) or _the_inst(gir, cls, row) is None:
            continue
        model = build_model(gir, seed, export=False, search=SearchConfig(time_ms=300))
        if model.oracle.output is not None:
            yield gir, model


def _cases():
    for cls in OPS:
        for row in sorted(set(zip(cls.in_dtypes, cls.out_dtypes)), key=str):
            yield pytest.param(cls, row, id=f"{cls.name}-{'-'.join(d.short for d in row[0] + row[1])}")


def test_the_family_has_its_ops():
    assert [c.name for c in OPS] == ["ConvInteger", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger",
                                     "QLinearConv", "QLinearMatMul", "QuantizeLinear"]


@pytest.mark.parametrize("cls, row", list(_cases()))
def test_reference_evaluator_numpy_and_torch_agree(cls, row):
    compared, written = 0, set()
    for gir, model in quant_models(cls, row):
        if compared >= GRAPHS_PER_CASE:
            break
        inst = _the_inst(gir, cls, row)
        want = evaluate(gir, model.weights, model.oracle.input)
        for name, w in model.oracle.output.items():
            _same(want[name], w, f"{inst.op!r}: numpy vs torch, {name}")
        for opset in (FIRST_OPSET, REFERENCE_SINCE, 21, newest_opset()):
            for spelling, seed in (("canonical", 0), ("random", 1), ("random", 2)):
                spec = ExportSpec(opset=opset, spelling=spelling, seed=seed, opsets=(opset, newest_opset()))
                try:
                    proto, used, drawn = build_onnx(gir, model.weights, spec)
                except Unspellable:
                    continue
                what = f"{inst.op!r} on {[str(gir.vars[v]) for v in inst.inputs]} at opset {used.opset} {drawn}"
                written.add(used.opset)
                check_onnx(proto, [gir.vars[o] for o in gir.outputs], gir.outputs, where=what)
                # onnx's own (De)QuantizeLinear from 19; below it, its newest one (onnx_reference_fixes)
                fixes = REFERENCE_FIXES if used.opset < REFERENCE_SINCE else None
                got = onnx_ref.ReferenceEvaluator(proto, new_ops=fixes).run(None, dict(model.oracle.input))
                for name, g in zip(gir.outputs, got):
                    _same(np.asarray(g), want[name], f"{what}: ReferenceEvaluator vs numpy, {name}")
                if _quant_only(row):
                    _single_op_check(proto, gir, inst, want, fixes, what)
        compared += 1
    assert compared, f"no single-op graph of {cls.name} on the dtypes {row}"
    assert written, f"{cls.name}{row} was written at no opset"


def _single_op_check(proto, gir, inst, want, fixes, what):
    """The node of ``inst`` cut out of the pair's model (its constants with it) agrees with the numpy reference
    on its own inputs: a QuantizeLinear's quantized-tensor output, a DequantizeLinear fed one."""
    model = onnx.shape_inference.infer_shapes(proto)
    one = onnx.utils.Extractor(model).extract_model(list(inst.inputs), list(inst.outputs))
    assert [n.op_type for n in one.graph.node if n.op_type != "Constant"] == [inst.op.name], what
    feed = {v: want[v] for v in inst.inputs}
    got = onnx_ref.ReferenceEvaluator(one, new_ops=fixes).run(None, feed)
    for name, g in zip(inst.outputs, got):
        _same(np.asarray(g), want[name], f"{what}: single-op ReferenceEvaluator vs numpy, {name}")


def _same(got, want, what):
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{what}: {got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}"
    if want.dtype.kind == "f" or str(want.dtype).startswith("float8"):  # NaN and inf: a float8 overflow
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-6, atol=0, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def test_dynamic_quantize_of_zeros_is_undefined():
    """Regression (ort-cpu campaign): DynamicQuantizeLinear of all zeros has scale 0 and y = x / 0; ONNX Runtime
    answers scale 1. The references give a NaN scale, so the test's expected outputs are undefined (None) and
    no inconsistency is reported; any non-zero element makes them defined again."""
    from nnfuzz.abstract.dtype import DType
    from nnfuzz.abstract.tensor import AbsTensor
    from nnfuzz.gir import GraphIR, Inst

    op = OP_REGISTRY["DynamicQuantizeLinear"]()
    gir = GraphIR(vars={"x": AbsTensor([1, 3], DType.float32), "y": AbsTensor([1, 3], DType.uint8),
                        "s": AbsTensor([], DType.float32), "z": AbsTensor([], DType.uint8)},
                  inputs=["x"], insts=[Inst(op, ["x"], ["y", "s", "z"])], outputs=["y", "s", "z"]).check()
    zeros = {"x": np.zeros([1, 3], np.float32)}
    assert np.isnan(evaluate(gir, {}, zeros)["s"])
    assert build_model(gir, 0, export=False, values=({}, zeros)).oracle.output is None
    some = {"x": np.array([[0.0, 0.0, -0.51]], np.float32)}
    out = build_model(gir, 0, export=False, values=({}, some)).oracle.output
    assert out is not None and np.isclose(out["s"], 0.51 / 255) and list(out["y"][0]) == [255, 255, 0]
