"""ReduceSumSquare, GlobalLpPool, LpNormalization and MeanVarianceNormalization (nnfuzz/ops/normalize):
rules, and every dtype row and attribute choice on hand-picked values through torch, the numpy reference,
the directly written ONNX model and ONNX Runtime."""
import itertools

import numpy as np
import pytest
import torch
from direct_check import check_direct

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.materialize.torch.losses import loss_for
from nnfuzz.materialize.torch.lowering import run_op
from nnfuzz.ops.normalize import spec as M

OPS = sorted((c for c in vars(M).values() if isinstance(c, type) and issubclass(c, AbsOpBase) and not c._abstract
              and c.__module__ == M.__name__), key=lambda c: c.__name__)
CASES = [(cls, row) for cls in OPS for row in cls.in_dtypes]
# (op, dtype) pairs ONNX Runtime (1.32, CPU) cannot run: the campaign's probe filters them (bfloat16: its
# Python API takes no bfloat16 inputs)
ORT_LACKS = {(c.__name__, "bfloat16") for c in OPS} | {("GlobalLpPool", "float64")}
X = np.linspace(-2.0, 3.0, 2 * 3 * 4 * 5).reshape(2, 3, 4, 5) * np.tile([1.0, -0.5], 60).reshape(2, 3, 4, 5)


def _instances(cls):
    keys = list(cls.attr_choices)
    for combo in itertools.product(*(cls.attr_choices[k] for k in keys)):
        args = (1,) if cls in (M.ReduceSumSquare, M.LpNormalization) else ()
        yield cls(*args, **dict(zip(keys, combo)))


def test_op_count():
    assert {c.__name__ for c in OPS} == {"ReduceSumSquare", "GlobalLpPool", "LpNormalization",
                                        "MeanVarianceNormalization"}


@pytest.mark.parametrize("cls,row", CASES, ids=[f"{c.__name__}-{r[0]}" for c, r in CASES])
def test_every_dtype_row(cls, row):
    dt = row[0]
    want = "unsupported" if (cls.__name__, dt.value) in ORT_LACKS else "ok"
    spelling = "canonical" if want == "unsupported" else "random"  # (ORT may have the other spellings' kernels)
    x = (np.round(X * 4) if dt.is_int else X).astype(dt.numpy())
    for k, op in enumerate(_instances(cls)):
        assert check_direct(op, [x], seed=k, spelling=spelling) == want, repr(op)
    other = {M.GlobalLpPool: x[0], M.MeanVarianceNormalization: x[..., None]}.get(cls, x[0, :, :, 0])  # other ranks
    assert check_direct(next(_instances(cls)), [other], seed=7, spelling=spelling) == want
    if cls is M.GlobalLpPool:
        assert check_direct(M.GlobalLpPool(p=2), [x[..., None]], seed=3, spelling=spelling) == want  # rank 5


def test_formulas():
    x = torch.tensor([[3.0, -4.0], [1.0, 1.0]])
    assert run_op(M.ReduceSumSquare(1, keepdims=False), x)[0].tolist() == [25.0, 2.0]
    assert torch.allclose(run_op(M.LpNormalization(1, p=1), x)[0], torch.tensor([[3 / 7, -4 / 7], [0.5, 0.5]]))
    assert torch.allclose(run_op(M.LpNormalization(1, p=2), x)[0], torch.tensor([[0.6, -0.8], [2 ** -0.5] * 2]))
    assert run_op(M.GlobalLpPool(p=1), x[None])[0].tolist() == [[[7.0], [2.0]]]
    y = run_op(M.MeanVarianceNormalization(axes=(1,)), torch.tensor([[1.0, 3.0]], dtype=torch.float64))[0]
    assert torch.allclose(y, torch.tensor([[-1.0, 1.0]], dtype=torch.float64) / (1 + 1e-9), rtol=0, atol=1e-15)


def test_shapes_and_ranks():
    assert M.GlobalLpPool(p=2).checked_type_transfer([AbsTensor([2, 3, 4, 5])])[0].shape == [2, 3, 1, 1]
    mvn = M.MeanVarianceNormalization(axes=(0, 2, 3))
    assert mvn.inp_ranks == [(4, 5)]
    assert False in mvn.checked_requires([AbsTensor([1, 3, 1, 1])])  # one element: no variance
    assert mvn.checked_requires([AbsTensor([1, 3, 2, 1])]) == []


def test_search_losses_reject_what_float32_cannot_compute():
    mvn = M.MeanVarianceNormalization(axes=(1,))
    flat = torch.tensor([[100.0, 100.001]])  # the variance cancels in float32
    assert float(loss_for(M.MeanVarianceNormalization)(mvn, [flat], [DType.float32])) > 0
    assert float(loss_for(M.MeanVarianceNormalization)(mvn, [torch.tensor([[-1.0, 2.0]])], [DType.float32])) == 0
    lp = M.LpNormalization(1, p=2)
    assert float(loss_for(M.LpNormalization)(lp, [torch.zeros(2, 3)], [DType.float32])) > 0
