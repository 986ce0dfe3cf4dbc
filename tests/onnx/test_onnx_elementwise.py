"""The elementwise, select and TF-only ONNX lowerings beyond test_direct_lowering's float32/int32/bool:
every other dtype they take (float16, bfloat16, float64, small and unsigned integers), and inputs where
a naive composition loses digits (log1p, expm1, softplus tails), a constant rounded to float32 shows
(log2 of powers of two) or a conversion rounds twice in torch (float64 -> float16). ONNX's
ReferenceEvaluator runs every model, canonical and with drawn spellings, at the oldest, a middle and
the newest opset, and is compared with torch eager.
"""
import numpy as np
import pytest
from onnx_reference_fixes import REFERENCE_FIXES
from single_op import single_op_models

from nnfuzz.abstract import AbsTensor, DType, load_builtin_ops
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.onnx.direct import Unspellable, build_onnx
from nnfuzz.materialize.onnx.export import check_onnx
from nnfuzz.materialize.onnx.spec import FIRST_OPSET, ExportSpec, newest_opset
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.ops.select import spec as S
from nnfuzz.ops.tfonly import spec as T

onnx_ref = pytest.importorskip("onnx.reference")

OPSETS = sorted({FIRST_OPSET, 18, newest_opset()})
SPELLINGS = [("canonical", 0)] + [("random", s) for s in range(1, 7)]
# (rtol, atol): a few ulps of each dtype, as the lowerings compute torch's formula rounded as torch
# rounds it; a node (Gelu, HardSwish) on float16/bfloat16 is computed in that dtype step by step by
# its function body (1 + erf(x) cancels), whence the half types' atol
TOLERANCE = {DType.float16: (4e-3, 1e-3), DType.bfloat16: (3e-2, 1e-2), DType.float32: (2e-6, 2e-9),
             DType.float64: (1e-12, 1e-15)}
OTHER_DTYPES = (DType.float16, DType.bfloat16, DType.float64, DType.int8, DType.uint8, DType.int64)
FAMILIES = ("elementwise", "select", "tfonly")


def _cases():
    for cls in sorted((c for c in load_builtin_ops().values() if c.family in FAMILIES), key=lambda c: c.name):
        firsts = {row[0] for row in cls.in_dtypes}
        for dt in OTHER_DTYPES:
            if dt in firsts:
                yield pytest.param(cls, dt, id=f"{cls.name}-{dt}")


def _compare(got, want, dtype, what, atol=None, exact=False):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{what}: ONNX {got.dtype}{list(got.shape)} vs torch {want.dtype}{list(want.shape)}"
    if dtype.is_float and not exact:
        rtol, usual_atol = TOLERANCE[dtype]
        atol = usual_atol if atol is None else atol
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _check_all_spellings(gir, model, out_dtype, atol=None, exact=False):
    written = set()
    for opset in OPSETS:
        for spelling, seed in SPELLINGS:
            spec = ExportSpec(opset=opset, spelling=spelling, seed=seed)
            try:
                proto, used, drawn = build_onnx(gir, model.weights, spec)
            except Unspellable:
                continue
            written.add(opset)
            what = f"{gir.insts[0].op!r} at opset {opset}, {spelling} {seed} {drawn}"
            check_onnx(proto, [gir.vars[o] for o in gir.outputs], gir.outputs, where=what)
            got = onnx_ref.ReferenceEvaluator(proto, new_ops=REFERENCE_FIXES).run(None, dict(model.oracle.input))
            for name, g in zip(gir.outputs, got):
                _compare(g, model.oracle.output[name], out_dtype, what, atol, exact)
    assert written, f"{gir.insts[0].op!r} could be written at none of the opsets {OPSETS}"


@pytest.mark.parametrize("cls, dtype", list(_cases()))
def test_lowering_agrees_with_torch_in_other_dtypes(cls, dtype):
    for gir, model in single_op_models(cls, dtype):
        _check_all_spellings(gir, model, gir.vars[gir.outputs[0]].dtype)
        return
    pytest.fail(f"no single-op graph of {cls.name} with a {dtype} input could be built")


def _one_op(op, dtype: DType, *xs: np.ndarray):
    """A graph of ``op`` on inputs ``xs`` (of ``dtype``), with its torch reference."""
    gir = GraphIR()
    names = [f"x{k}" for k in range(len(xs))]
    for name, x in zip(names, xs):
        gir.vars[name] = AbsTensor(list(x.shape), dtype)
    gir.inputs, gir.outputs = names, ["y"]
    gir.vars["y"] = op.checked_type_transfer([gir.vars[n] for n in names])[0]
    gir.insts = [Inst(op, names, ["y"])]
    feed = {n: x.astype(dtype.numpy()) for n, x in zip(names, xs)}
    return gir, build_model(gir.check(), 0, export=False, values=({}, feed))


# inputs where Log(1 + x), Exp(x) - 1 or Log(Exp(x) + 1) would be off by far more than the tolerance
TAILS = [
    (E.Log1p(), [1e-10, -1e-7, 3e-5, -0.5, 1e5]),
    (E.LogSigmoid(), [30.0, 50.0, 15.0, -30.0, 0.5]),
    (E.Softplus(), [-30.0, -90.0, 25.0, 0.1, -1e-3]),
    (E.Elu(alpha=0.5), [-1e-7, -1e-3, -20.0, -100.0, 2.0]),
    (E.Selu(), [-1e-7, -1e-3, -20.0, -100.0, 2.0]),
    (E.Celu(alpha=2.0), [-1e-7, -1e-3, -20.0, -100.0, 2.0]),
    (E.Mish(), [-30.0, -1e-6, 30.0, 100.0, 1.0]),
    (E.Silu(), [-30.0, -1e-6, 30.0, 100.0, 1.0]),
    (E.Gelu(approximate="none"), [-2.0, -1e-6, 1e-6, 3.0, 0.7]),
    (E.Gelu(approximate="tanh"), [-2.0, -1e-6, 1e-6, 3.0, 0.7]),
]


@pytest.mark.parametrize("op, xs", TAILS, ids=[f"{op!r}" for op, _ in TAILS])
@pytest.mark.parametrize("dtype", [DType.float32, DType.float64])
def test_compositions_keep_the_digits_of_small_results(op, xs, dtype):
    if dtype not in {row[0] for row in type(op).in_dtypes}:
        pytest.skip(f"{op!r} takes no {dtype}")
    gir, model = _one_op(op, dtype, np.array(xs))
    _check_all_spellings(gir, model, dtype, atol=float(np.finfo(dtype.numpy()).tiny))  # relative down to tiny


@pytest.mark.parametrize("dtype", [DType.float16, DType.float32, DType.float64])
def test_log2_of_powers_of_two_is_exact(dtype):
    """Log(x) / ln2 with ln2 rounded to float16 gives log2(4) = 2.002 where torch gives 2 (bfloat16's
    log(4) is already too coarse for that in torch)."""
    gir, model = _one_op(E.Log2(), dtype, np.array([4.0, 8.0, 1024.0, 0.5]))
    np.testing.assert_array_equal(model.oracle.output["y"].astype(np.float64), [2.0, 3.0, 10.0, -1.0])
    _check_all_spellings(gir, model, dtype, exact=True)


@pytest.mark.parametrize("src, to, x", [
    (DType.float64, DType.float16, 1 + 2.0 ** -11 + 2.0 ** -40),   # one rounding: 1.001; torch: 1.0
    (DType.float64, DType.bfloat16, 1 + 2.0 ** -8 + 2.0 ** -40),
    (DType.int32, DType.bfloat16, 2 ** 25 + 2 ** 17 + 1),
])
def test_cast_rounds_through_float32_like_torch(src, to, x):
    gir, model = _one_op(S.Cast(to=to), src, np.array([x, 1.0, -3.0]))
    _check_all_spellings(gir, model, to, exact=True)


X_SIGNS = [5.5, -5.5, 5.5, -5.5, 6.0, -6.0, 0.0, 1e-30, -7.0, 3.0]


@pytest.mark.parametrize("op, y", [
    (T.FloorMod(), [2.0, 2.0, -2.0, -2.0, -3.0, 3.0, 2.0, -3.0, -2.5, 0.75]),  # y != 0: FloorMod's domain
    (T.DivNoNan(), [2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 2.0, -3.0, 0.0, -0.0]),
], ids=["FloorMod", "DivNoNan"])
@pytest.mark.parametrize("dtype", [DType.float32, DType.float64])
def test_tf_compositions_on_every_sign_and_zero(op, y, dtype):
    """Every sign of x, y and fmod(x, y), a zero remainder, a zero and a -0 divisor: one rounding in
    torch and in ONNX, so the same bits."""
    gir, model = _one_op(op, dtype, np.array(X_SIGNS), np.array(y))
    _check_all_spellings(gir, model, dtype, exact=True)
