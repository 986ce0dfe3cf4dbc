"""The activations with ONNX's parameters (nnfuzz/ops/activation): rules, and every dtype row and
attribute choice on hand-picked values through torch, the numpy reference, the directly written ONNX
model and ONNX Runtime."""
import itertools

import numpy as np
import pytest
import torch
from direct_check import check_direct

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.materialize.torch.lowering import run_op
from nnfuzz.ops.activation import spec as A

OPS = sorted((c for c in vars(A).values() if isinstance(c, type) and issubclass(c, AbsOpBase) and not c._abstract),
             key=lambda c: c.__name__)
CASES = [(cls, row) for cls in OPS for row in cls.in_dtypes]
# (op, dtype) pairs ONNX Runtime (1.32, CPU) cannot run: the campaign's probe filters them (bfloat16: its
# Python API takes no bfloat16 inputs)
ORT_LACKS = {(c.__name__, "bfloat16") for c in OPS}
X = np.array([[-2.5, -1.0, -0.25, 0.0], [0.3, 0.5, 1.0, 3.0]])


def _instances(cls):
    keys = list(cls.attr_choices)
    for combo in itertools.product(*(cls.attr_choices[k] for k in keys)):
        yield cls(**dict(zip(keys, combo)))


def _x(dt):
    return (np.round(X * 3) if dt.is_int else X).astype(dt.numpy()) if dt is not DType.uint8 else \
        np.abs(np.round(X * 3)).astype(np.uint8)


def test_op_count():
    assert {c.__name__ for c in OPS} == {"PRelu", "HardSigmoidAlphaBeta", "ThresholdedRelu", "Shrink"}


@pytest.mark.parametrize("cls,row", CASES, ids=[f"{c.__name__}-{r[0]}" for c, r in CASES])
def test_every_dtype_row(cls, row):
    dt = row[0]
    want = "unsupported" if (cls.__name__, dt.value) in ORT_LACKS else "ok"
    if cls is A.PRelu:  # slopes of each broadcastable rank: [1], [4], [2, 1], x's shape
        for slope in ([0.5], [0.25, 2.0, -1.0, 0.0], [[0.5], [-2.0]], X[::-1]):
            s = np.asarray(slope) * (4 if dt.is_int else 1)
            assert check_direct(A.PRelu(), [_x(dt), s.astype(dt.numpy())], seed=len(s.shape)) == want
        return
    for k, op in enumerate(_instances(cls)):
        assert check_direct(op, [_x(dt)], seed=k) == want, repr(op)


def test_formulas():
    x = torch.tensor([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 3.0])
    assert run_op(A.Shrink(lambd=1.0, bias=2.0), x)[0].tolist() == [-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.5, 1.0]
    assert run_op(A.ThresholdedRelu(alpha=1.0), x)[0].tolist() == [0, 0, 0, 0, 0, 0, 1.5, 3.0]
    assert run_op(A.HardSigmoidAlphaBeta(alpha=0.25, beta=0.5), x)[0].tolist() == \
        [0.0, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0]
    i = torch.tensor([-3, 1, 3], dtype=torch.int32)
    assert run_op(A.Shrink(lambd=0.5, bias=1.0), i)[0].tolist() == [-2, 0, 2]
    assert run_op(A.Shrink(lambd=0.5, bias=1.0), i)[0].dtype is torch.int32


def test_prelu_slope_is_unidirectionally_broadcastable():
    op = A.PRelu()
    x = AbsTensor([2, 3, 4], DType.float32)
    for ok in ([], [1], [4], [3, 1], [1, 3, 4], [2, 3, 4]):
        assert False not in op.checked_requires([x, AbsTensor(ok, DType.float32)]), ok
        assert op.checked_type_transfer([x, AbsTensor(ok, DType.float32)])[0].shape == [2, 3, 4]
    for bad in ([2], [3], [5, 2, 3, 4], [2, 1, 1, 1]):
        assert False in op.checked_requires([x, AbsTensor(bad, DType.float32)]), bad
