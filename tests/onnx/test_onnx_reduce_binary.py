"""The ONNX lowerings of the binary, reduce and norm families beyond test_direct_lowering.py: every dtype
of each op (not only the float32/int32/bool representatives), and every drawn spelling of each op
reached and agreeing with the numpy reference under ONNX's ReferenceEvaluator.
"""
import numpy as np
import pytest
from onnx_reference_fixes import REFERENCE_FIXES
from single_op import single_op_models

from nnfuzz.abstract import OP_REGISTRY, load_builtin_ops
from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.direct import build_onnx
from nnfuzz.materialize.onnx.export import check_onnx
from nnfuzz.materialize.onnx.spec import FIRST_OPSET, ExportSpec, newest_opset
from nnfuzz.reference import evaluate

onnx_ref = pytest.importorskip("onnx.reference")

load_builtin_ops()
FAMILIES = ("binary", "reduce", "norm")
OPS = sorted((c for c in OP_REGISTRY.values() if c.__module__.startswith("nnfuzz.") and c.family in FAMILIES),
             key=lambda c: c.name)
# ReferenceEvaluator vs float64 numpy: the op computed in the dtype itself (float16/bfloat16 keep 11/8 bits)
TOLERANCE = {DType.float16: 1e-2, DType.bfloat16: 4e-2, DType.float32: 1e-4, DType.float64: 1e-9}


def _run_and_compare(gir, model, spec, what):
    proto, used, drawn = build_onnx(gir, model.weights, spec)
    where = f"{what} at opset {used.opset}, {drawn}"
    check_onnx(proto, [gir.vars[o] for o in gir.outputs], gir.outputs, where=where)
    got = onnx_ref.ReferenceEvaluator(proto, new_ops=REFERENCE_FIXES).run(None, dict(model.oracle.input))
    want = evaluate(gir, model.weights, model.oracle.input)
    for name, g in zip(gir.outputs, got):
        g, w = np.asarray(g), want[name]
        assert g.shape == w.shape and g.dtype == w.dtype, f"{where}: {g.dtype}{list(g.shape)} vs {w.dtype}{list(w.shape)}"
        tol = TOLERANCE.get(gir.vars[name].dtype)
        if tol is None:
            np.testing.assert_array_equal(g, w, err_msg=where)
        else:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol, err_msg=where)
    return used, drawn


def _dtype_cases():
    for cls in OPS:
        for dt in sorted({row[0] for row in cls.in_dtypes}, key=str):
            if dt not in (DType.float32, DType.int32, DType.bool):  # those are test_direct_lowering's
                yield pytest.param(cls, dt, id=f"{cls.name}-{dt}")


@pytest.mark.parametrize("cls, dtype", list(_dtype_cases()))
def test_each_dtype_agrees_with_numpy(cls, dtype):
    """One single-op graph per op x dtype, written from the oldest and the newest opset (moving up
    where the op x dtype needs it), canonically and with two drawn spellings."""
    gir, model = next(single_op_models(cls, dtype, seeds=range(20)), (None, None))
    assert gir is not None, f"no single-op graph of {cls.name} with a {dtype} first input"
    for opset in (FIRST_OPSET, newest_opset()):
        for spelling, seed in (("canonical", 0), ("random", 1), ("random", 2)):
            spec = ExportSpec(opset=opset, spelling=spelling, seed=seed, opsets=(opset, newest_opset()))
            _run_and_compare(gir, model, spec, f"{cls.name}({dtype}) {spelling} {seed}")


# op -> (first-input dtype, the spellings its lowering must draw: values recorded in the spellings)
SPELLINGS = {
    "Add": (DType.float32, {"x,y", "y,x"}),
    "Sub": (DType.int32, {"Sub", "Add(Neg)"}),
    "Pow": (DType.float32, {"Pow", "wider exponent"}),
    "Max": (DType.float32, {"x,y", "y,x", "x,y,x"}),
    "Less": (DType.float32, {"Less", "Greater"}),
    "GreaterEqual": (DType.int32, {"GreaterOrEqual", "LessOrEqual", "Or(Greater,Equal)", "Not(Less)"}),
    "LessEqual": (DType.float32, {"LessOrEqual", "GreaterOrEqual", "Or(Less,Equal)"}),
    "And": (DType.bool, {"x,y", "y,x", "Not(Or(Not,Not))"}),
    "Xor": (DType.bool, {"x,y", "y,x", "Not(Equal)"}),
    "Not": (DType.bool, {"Not", "Xor(True)", "Equal(False)"}),
    "ReduceSum": (DType.int32, {"positive", "negative", "omitted", "given"}),
    "ReduceMax": (DType.float32, {"keepdims=0", "keepdims+Squeeze", "given"}),
    "ReduceL1": (DType.float32, {"ReduceL1", "ReduceSum(Abs)"}),
    "ReduceL2": (DType.float32, {"ReduceL2", "Sqrt(ReduceSumSquare)"}),
    "LogSumExp": (DType.float32, {"ReduceLogSumExp", "max-shifted"}),
    "ArgMax": (DType.float32, {"positive", "negative", "omitted", "given"}),
    "ArgMin": (DType.int32, {"keepdims=0", "keepdims+Squeeze"}),
    "Softmax": (DType.float32, {"Softmax", "composed"}),
    "LogSoftmax": (DType.float32, {"LogSoftmax", "composed"}),
    "CumSum": (DType.float32, {"forward", "reverse of reversed", "int32", "int64"}),
    "BatchNorm": (DType.float32, {"omitted", "given"}),
    "InstanceNorm": (DType.float32, {"InstanceNormalization", "composed", "Unsqueeze", "Reshape"}),
    "GroupNorm": (DType.float32, {"GroupNormalization", "Reshape+InstanceNormalization", "composed", "Mul", "Pow"}),
    "LayerNorm": (DType.float32, {"LayerNormalization", "composed"}),
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_every_spelling_is_drawn_and_agrees(name):
    """Drawn over many seeds, each listed spelling of the op comes up, and every model drawn agrees."""
    dtype, expected = SPELLINGS[name]
    gir, model = next(single_op_models(OP_REGISTRY[name], dtype, seeds=range(20)), (None, None))
    assert gir is not None, f"no single-op graph of {name} with a {dtype} first input"
    seen = set()
    for seed in range(24):
        for opset in (17, newest_opset()):
            _, drawn = _run_and_compare(gir, model, ExportSpec(opset=opset, seed=seed), f"{name} seed {seed}")
            seen |= set(drawn.get(gir.insts[0].outputs[0], {}).values())
    assert expected <= seen, f"{name}: spellings never drawn: {sorted(expected - seen)} (drawn: {sorted(seen)})"


@pytest.mark.parametrize("name", ["GreaterEqual", "LessEqual"])
def test_bfloat16_or_equal_is_written_at_opset_13(name):
    """GreaterOrEqual/LessOrEqual take bfloat16 only from opset 16; the lowering writes Or(Greater, Equal)
    below it rather than moving the model's opset."""
    gir, model = next(single_op_models(OP_REGISTRY[name], DType.bfloat16, seeds=range(20)), (None, None))
    assert gir is not None
    for seed in range(4):
        used, _ = _run_and_compare(gir, model, ExportSpec(opset=13, seed=seed, opsets=(13, newest_opset())),
                                   f"{name}(bfloat16) seed {seed}")
        assert used.opset == 13, f"{name}(bfloat16) moved to opset {used.opset}"


def test_float16_l2_composed_does_not_overflow_where_the_norm_does_not():
    """Regression (tvm-cpu campaign 27/tvm-cpu-dynamic-0, folder 0062): float16 ReduceL2 written as
    Sqrt(ReduceSumSquare) summed its squares in float16, which overflows past 65504 where the norm (here
    about 283) does not; TVM and ONNX's reference evaluator gave inf, nnfuzz's reference the norm: a false
    alarm. The composition now runs in float32 between two Casts, as the other compositions of halves."""
    from graphs import chain
    from nnfuzz.ops.reduce.spec import ReduceL2

    gir = chain(ReduceL2(1, keepdims=False), shape=(2, 2), dtype=DType.float16)
    x = np.full((2, 2), 200.0, np.float16)  # squares sum to 80000: inf in float16; the norm is 282.8
    seen = set()
    for seed in range(16):
        proto, _, drawn = build_onnx(gir, {}, ExportSpec(opset=newest_opset(), seed=seed))
        spelled = drawn.get("v0", {}).get("L2")
        seen.add(spelled)
        if spelled != "Sqrt(ReduceSumSquare)":
            continue  # one ReduceL2 node: the evaluator computes it in float16 (a system need not)
        (got,) = onnx_ref.ReferenceEvaluator(proto, new_ops=REFERENCE_FIXES).run(None, {"x": x})
        np.testing.assert_allclose(np.asarray(got, np.float64), [282.8, 282.8], rtol=1e-3, err_msg=spelled)
    assert "Sqrt(ReduceSumSquare)" in seen, f"the composed spelling was never drawn: {sorted(map(str, seen))}"
