"""Every TF lowering against the torch lowering of the same op and against the numpy reference:
single-op graphs with safe values (the value search on the torch twin), TF eager vs torch eager vs
numpy on the same inputs and weights. The comparisons run in a contained worker (tests/contained.py):
TF's native crashes (bugs/kept/0021: its oneDNN Conv3D corrupts the heap on one thread on AVX-512 CPUs) fail
one test, not the run.

Floats agree within rtol 1e-3 / atol 1e-4 for float32 (1e-6/1e-8 for float64): two libraries' kernels
(erf, tanh, exp, conv accumulation order) differ in their last bits, more than the numpy-vs-torch check
of the reference, which computes the same formula. Integers and bools agree exactly. An op x dtype TF
has no kernel for is the system's limitation (skipped, never failed), but each op must be compared on
at least one dtype. Against the numpy reference (float64 arithmetic on the same formula) floats agree
within rtol 1e-4 / atol 1e-5 in float32, as the torch lowerings do (tests/reference), and within 1e-2
in the half types, which round every intermediate.
"""
import numpy as np
import pytest
from contained import contained  # noqa: F401 - the fixture
from single_op import single_op_models

tf = pytest.importorskip("tensorflow")

from nnfuzz.abstract import OP_REGISTRY, load_builtin_ops  # noqa: E402
from nnfuzz.abstract.dtype import DType  # noqa: E402
from nnfuzz.backends.known import classify  # noqa: E402
from nnfuzz.materialize.tensorflow.lowering import NO_TF_LOWERING, has_tf_lowering  # noqa: E402
from nnfuzz.materialize.tensorflow.module import TFGraph, check_tf_outputs  # noqa: E402
from nnfuzz.reference import evaluate  # noqa: E402

load_builtin_ops()
BUILTIN = sorted((c for c in OP_REGISTRY.values() if c.__module__.startswith("nnfuzz.")), key=lambda c: c.name)
DTYPES = {"f32": DType.float32, "f64": DType.float64, "i32": DType.int32, "i64": DType.int64, "bool": DType.bool}
TOL = {DType.float32: (1e-3, 1e-4), DType.float64: (1e-6, 1e-8)}
REF_TOL = {DType.float32: (1e-4, 1e-5), DType.float64: (1e-6, 1e-8)}
GRAPHS_PER_CASE = 3


def _cases():
    for cls in BUILTIN:
        if not has_tf_lowering(cls):
            continue
        firsts = {row[0] for row in cls.in_dtypes} if cls.in_dtypes and cls.in_dtypes[0] else set(DTYPES.values())
        for cat, dt in DTYPES.items():
            if dt in firsts:
                yield pytest.param(cls, dt, id=f"{cls.name}-{cat}")


def test_every_builtin_op_has_a_tf_lowering_or_a_reason():
    missing = [c.name for c in BUILTIN if not has_tf_lowering(c) and c.name not in NO_TF_LOWERING]
    assert not missing, f"ops with neither a TF lowering nor an entry in NO_TF_LOWERING: {missing}"
    stale = [n for n in NO_TF_LOWERING if n in OP_REGISTRY and has_tf_lowering(OP_REGISTRY[n])]
    assert not stale, f"NO_TF_LOWERING lists ops that have a TF lowering: {stale}"


@pytest.mark.slow
@pytest.mark.parametrize("cls, dtype", list(_cases()))
def test_tf_agrees_with_torch(contained, cls, dtype):
    contained(compare_with_torch, cls, dtype)


def compare_with_torch(cls, dtype):
    """TF eager against torch and the numpy reference on up to GRAPHS_PER_CASE single-op graphs."""
    compared, unsupported = 0, []
    for gir, model in single_op_models(cls, dtype, range(30)):
        if compared >= GRAPHS_PER_CASE:
            break
        (inst,) = gir.insts
        what = f"{inst.op!r} on {[str(gir.vars[v]) for v in inst.inputs]}"
        try:
            got = TFGraph(gir, model.weights).eager(model.oracle.input)
        except Exception as e:  # noqa: BLE001 - classified below; anything unknown fails the test
            if classify("tf", f"{type(e).__name__}: {e}") is None:
                raise AssertionError(f"TF lowering of {what} raised {type(e).__name__}: {e}") from e
            unsupported.append(f"{what}: {str(e).splitlines()[0][:120]}")
            continue
        check_tf_outputs(gir, got)
        ref = evaluate(gir, model.weights, model.oracle.input)
        for name, want in model.oracle.output.items():
            _assert_close(got[name], want, f"{what}, output {name}")
            _assert_close(got[name], ref[name], f"{what}, output {name} (numpy reference)", REF_TOL)
        compared += 1
    if not compared and unsupported:
        pytest.skip(f"TF has no kernel: {unsupported[0]}")
    assert compared, f"no single-op graph of {cls.name} with a {dtype} first input could be built and compared"


def _assert_close(tf_out: np.ndarray, torch_out: np.ndarray, what: str, tol=TOL) -> None:
    assert tf_out.shape == torch_out.shape and tf_out.dtype == torch_out.dtype, \
        f"{what}: TF {tf_out.dtype}{list(tf_out.shape)} vs {torch_out.dtype}{list(torch_out.shape)}"
    dt = DType.parse(tf_out.dtype)
    if dt.is_float:
        rtol, atol = tol.get(dt, (1e-2, 1e-2))
        np.testing.assert_allclose(tf_out.astype(np.float64), torch_out.astype(np.float64), rtol=rtol, atol=atol,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(tf_out, torch_out, err_msg=what)
