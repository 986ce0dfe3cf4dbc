"""Every ONNX lowering means what the op's torch lowering computes: for each op and each dtype category
(float32, int32 and bool stand for float, integer and bool), single-op graphs with safe values are
written directly as ONNX at the oldest, a middle and the newest opset, canonically and with drawn
spellings; each model passes the full checker and strict shape inference (agreeing with type_transfer),
and ONNX's ReferenceEvaluator on it agrees with the numpy reference and with torch.

Where onnx's ReferenceEvaluator itself is wrong, ``onnx_reference_fixes`` corrects it (each fix says how).
Tolerances are the reference tests' (rtol 1e-4, atol 1e-5 for floats; exact otherwise): every side
computes the same formula, and only float32 rounding separates them.
"""
import numpy as np
import pytest
from onnx_reference_fixes import REFERENCE_FIXES
from single_op import single_op_models

from nnfuzz.abstract import OP_REGISTRY, load_builtin_ops
from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.direct import Unspellable, build_onnx
from nnfuzz.materialize.onnx.export import check_onnx
from nnfuzz.materialize.onnx.lowering import has_onnx_lowering
from nnfuzz.materialize.onnx.spec import FIRST_OPSET, ExportSpec, newest_opset
from nnfuzz.reference import evaluate

onnx_ref = pytest.importorskip("onnx.reference")

load_builtin_ops()
BUILTIN = sorted((c for c in OP_REGISTRY.values() if c.__module__.startswith("nnfuzz.")), key=lambda c: c.name)
REPRESENTATIVE = {"float": DType.float32, "int": DType.int32, "bool": DType.bool}
GRAPHS_PER_CASE = 2
OPSETS = sorted({FIRST_OPSET, 18, newest_opset()})
SPELLINGS = [("canonical", 0), ("random", 1), ("random", 2), ("random", 3)]


def _cases():
    for cls in BUILTIN:
        firsts = {row[0] for row in cls.in_dtypes} if cls.in_dtypes and cls.in_dtypes[0] else set()
        for cat, dt in REPRESENTATIVE.items():
            if dt in (firsts or set(REPRESENTATIVE.values())):
                yield pytest.param(cls, dt, id=f"{cls.name}-{cat}")


def test_every_builtin_op_has_an_onnx_lowering():
    missing = [c.name for c in BUILTIN if not has_onnx_lowering(c)]
    assert not missing, f"ops without an ONNX lowering: {missing}"


@pytest.mark.parametrize("cls, dtype", list(_cases()))
def test_onnx_lowering_agrees_with_reference_and_torch(cls, dtype):
    if not has_onnx_lowering(cls):
        pytest.fail(f"{cls.name} has no ONNX lowering")
    compared, written = 0, set()
    for gir, model in single_op_models(cls, dtype):
        if compared >= GRAPHS_PER_CASE:
            break
        (inst,) = gir.insts
        want = evaluate(gir, model.weights, model.oracle.input)
        for opset in OPSETS:
            for spelling, seed in SPELLINGS:
                spec = ExportSpec(opset=opset, spelling=spelling, seed=seed)
                what = f"{inst.op!r} on {[str(gir.vars[v]) for v in inst.inputs]} at opset {opset}, {spelling} {seed}"
                try:
                    proto, used, drawn = build_onnx(gir, model.weights, spec)
                except Unspellable:
                    continue  # this op x dtype needs another opset (some other one in OPSETS must write it)
                written.add(opset)
                check_onnx(proto, [gir.vars[o] for o in gir.outputs], gir.outputs, where=what)
                feed = {k: v for k, v in model.oracle.input.items()}
                got = onnx_ref.ReferenceEvaluator(proto, new_ops=REFERENCE_FIXES).run(None, feed)
                for name, g in zip(gir.outputs, got):
                    _assert_same(np.asarray(g), want[name], f"{what} {drawn}: ReferenceEvaluator vs numpy, {name}")
                    _assert_same(np.asarray(g), model.oracle.output[name], f"{what} {drawn}: vs torch, {name}")
        compared += 1
    assert compared, f"no single-op graph of {cls.name} with a {dtype} first input could be built and compared"
    assert written, f"{cls.name} with a {dtype} first input could be written at none of the opsets {OPSETS}"


def _assert_same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{what}: ONNX {got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}"
    if want.dtype.kind == "f" or str(want.dtype) == "bfloat16":
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-4, atol=1e-5, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)
