"""The integer ops with ONNX semantics (nnfuzz/ops/bitwise): rules, domains, and every dtype row on
hand-picked values in the domain through torch, the numpy reference, the directly written ONNX model and
ONNX Runtime. The TorchScript exporter writes none of these at its opset 17 (Bitwise* need 18)."""
import numpy as np
import pytest
import torch
from direct_check import check_direct

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.abstract.ranges import VRange, infeasible
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.materialize.torch.losses import loss_for
from nnfuzz.materialize.torch.lowering import run_op
from nnfuzz.ops.bitwise import spec as K

OPS = sorted((c for c in vars(K).values() if isinstance(c, type) and issubclass(c, AbsOpBase) and not c._abstract),
             key=lambda c: c.__name__)
CASES = [(cls, row) for cls in OPS for row in cls.in_dtypes]
# (op, dtype row) pairs ONNX Runtime (1.32, CPU) has no kernel for: the campaign's probe filters them
ORT_LACKS = {("IntPow", (b, e)) for b in ("int32", "int64") for e in ("int8", "int16", "uint8")}


def _op(cls, direction="LEFT"):
    return cls(direction=direction) if cls is K.BitShift else cls()


def _values(cls, row):
    x = np.array([[-7, 5, 0], [3, -2, 6], [-128, 100, 1]])
    y = {K.BitShift: [1, 3, 7], K.IntPow: [0, 2, 3]}.get(cls, [3, -2, 1])
    if row[0] is DType.uint8:
        x, y = np.abs(x) % 256, np.abs(y)
    if cls is K.IntPow:
        x = np.clip(x, -100, 100)
    arrays = [x.astype(row[0].numpy()), np.array(y).astype(row[1].numpy())] if len(row) == 2 else [x.astype(row[0].numpy())]
    return arrays


def test_op_count():
    assert {c.__name__ for c in OPS} == {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "BitShift", "Mod",
                                        "IntDiv", "IntPow"}


@pytest.mark.parametrize("cls,row", CASES, ids=[f"{c.__name__}-{'-'.join(map(str, r))}" for c, r in CASES])
def test_every_dtype_row(cls, row):
    want = "unsupported" if (cls.__name__, tuple(d.value for d in row)) in ORT_LACKS else "ok"
    for direction in ("LEFT", "RIGHT") if cls is K.BitShift else ("LEFT",):
        assert check_direct(_op(cls, direction), _values(cls, row), seed=len(row)) == want


def test_signs_follow_onnx():
    x = torch.tensor([-7, 7, -7, 7], dtype=torch.int32)
    y = torch.tensor([3, -3, -3, 3], dtype=torch.int32)
    assert run_op(K.Mod(), x, y)[0].tolist() == [2, -2, -1, 1]  # the divisor's sign (Python's %)
    assert run_op(K.IntDiv(), x, y)[0].tolist() == [-2, -2, 2, 2]  # truncated towards zero
    s = torch.tensor([-100, 7], dtype=torch.int8)
    assert run_op(K.BitShift(direction="LEFT"), s, torch.tensor([2, 2], dtype=torch.int8))[0].tolist() == [112, 28]
    assert run_op(K.BitShift(direction="RIGHT"), s, torch.tensor([2, 2], dtype=torch.int8))[0].tolist() == [-25, 1]


def test_undefined_division_is_guarded_and_out_of_the_domain():
    # the value search runs the lowering before its loss: torch must neither raise (y == 0) nor trap
    # (int32 minimum / -1) there, and the loss must say the values are outside the domain
    x = torch.tensor([torch.iinfo(torch.int32).min, 5], dtype=torch.int32)
    y = torch.tensor([-1, 0], dtype=torch.int32)
    for cls in (K.IntDiv, K.Mod):
        run_op(cls(), x, y)
        loss = loss_for(cls)(cls(), [x.double(), y.double()], [DType.int32, DType.int32])
        assert float(loss) > 0, cls.__name__
        ok = loss_for(cls)(cls(), [x.double(), torch.tensor([2.0, 3.0])], [DType.int32, DType.int32])
        assert float(ok) == 0, cls.__name__


def test_domains_cut_graphs_no_value_can_rescue():
    zero, small = VRange(0.0, 0.0, 0.0, 0.0, True), VRange(0.0, 7.0)
    assert infeasible(K.Mod(), [small, zero]) is not None
    assert infeasible(K.IntDiv(), [small, zero]) is not None
    assert infeasible(K.BitShift(direction="LEFT"), [small, VRange(8.0, 20.0)]) is not None
    assert infeasible(K.IntPow(), [small, VRange(-5.0, -1.0)]) is not None
    assert infeasible(K.BitShift(direction="LEFT"), [small, small]) is None


def test_rows_and_broadcast():
    out = K.IntPow().checked_type_transfer([AbsTensor([2, 1, 3], DType.int64), AbsTensor([4, 1], DType.uint8)])
    assert out[0].shape == [2, 4, 3] and out[0].dtype is DType.int64
    assert all(dt.is_int for row in K.BitwiseAnd.in_dtypes for dt in row)
    assert False in K.BitwiseXor().checked_requires([AbsTensor([2, 3], DType.int8), AbsTensor([4], DType.int8)])
