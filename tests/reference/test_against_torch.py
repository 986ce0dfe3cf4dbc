"""The numpy reference checks every torch lowering: for each op and each dtype category its eval
treats differently (float, integer, bool; float32, int32 and bool stand for them), single-op graphs
with safe random values (the value search) must give the same outputs in numpy and in torch.

Floats agree within rtol 1e-4 (plus an absolute 1e-5 for values near 0): both sides compute the
same formula, torch in float32 and numpy in float64, so only float32 rounding separates them.
Integers and bools agree exactly.
"""
import numpy as np
import pytest
from single_op import single_op_models

from nnfuzz.abstract import OP_REGISTRY, load_builtin_ops
from nnfuzz.abstract.dtype import DType
from nnfuzz.reference import eval_for, evaluate

load_builtin_ops()
BUILTIN = sorted((c for c in OP_REGISTRY.values() if c.__module__.startswith("nnfuzz.")), key=lambda c: c.name)
REPRESENTATIVE = {"float": DType.float32, "int": DType.int32, "bool": DType.bool}
GRAPHS_PER_CASE = 4


def _first_input_dtypes(cls):
    return {row[0] for row in cls.in_dtypes} if cls.in_dtypes and cls.in_dtypes[0] else set()


def _cases():
    for cls in BUILTIN:
        firsts = _first_input_dtypes(cls)
        if not firsts:  # per-instance tables (Cast): every category
            firsts = set(REPRESENTATIVE.values())
        for cat, dt in REPRESENTATIVE.items():
            if dt in firsts:
                yield pytest.param(cls, dt, id=f"{cls.name}-{cat}")


def test_every_builtin_op_has_an_eval():
    missing = [c.name for c in BUILTIN if eval_for(c) is None]
    assert not missing, f"ops without a numpy reference eval: {missing}"


@pytest.mark.parametrize("cls, dtype", list(_cases()))
def test_reference_agrees_with_torch(cls, dtype):
    if eval_for(cls) is None:
        pytest.fail(f"{cls.name} has no numpy eval")
    compared = 0
    for gir, model in single_op_models(cls, dtype):
        if compared >= GRAPHS_PER_CASE:
            break
        (inst,) = gir.insts
        got = evaluate(gir, model.weights, model.oracle.input)
        for name, want in model.oracle.output.items():
            _assert_same(got[name], want, f"{inst.op!r} on {[str(gir.vars[v]) for v in inst.inputs]}, output {name}")
        compared += 1
    assert compared, f"no single-op graph of {cls.name} with a {dtype} first input could be built and compared"


def _assert_same(ref: np.ndarray, torch_out: np.ndarray, what: str) -> None:
    assert ref.shape == torch_out.shape and ref.dtype == torch_out.dtype, \
        f"{what}: numpy {ref.dtype}{list(ref.shape)} vs torch {torch_out.dtype}{list(torch_out.shape)}"
    if ref.dtype.kind == "f" or str(ref.dtype) == "bfloat16":
        np.testing.assert_allclose(ref.astype(np.float64), torch_out.astype(np.float64), rtol=1e-4, atol=1e-5,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(ref, torch_out, err_msg=what)
