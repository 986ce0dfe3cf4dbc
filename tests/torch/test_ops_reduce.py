import random

import pytest
import z3
from oputil import check_op as check, solve_concrete

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.ops.reduce import spec as R
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError

OPS = sorted(
    (c for c in vars(R).values() if isinstance(c, type) and issubclass(c, AbsOpBase) and not c._abstract),
    key=lambda c: c.__name__,
)
REDUCE = [c for c in OPS if issubclass(c, R.ReduceOp)]
CASES = [(cls, row) for cls in OPS for row in cls.in_dtypes]




def make(cls, axis, keepdims=False):
    return cls(axis, keepdims=keepdims) if issubclass(cls, R.ReduceOp) else cls(axis)


@pytest.mark.parametrize("cls,row", CASES, ids=[f"{c.__name__}-{r[0]}" for c, r in CASES])
def test_every_dtype_row(cls, row):
    keepdims = row[0].itemsize % 2 == 0  # alternate keepdims across rows
    check(make(cls, 1, keepdims), [AbsTensor([2, 3, 4], row[0])])
    # rank 1 -> rank 0 (0-d float64 results are where the exporter misbehaves elsewhere)
    check(make(cls, 0), [AbsTensor([3], row[0])])


@pytest.mark.parametrize("cls", OPS, ids=[c.__name__ for c in OPS])
def test_axes_and_ranks(cls):
    f = DType.float32
    for keepdims in (False, True):
        check(make(cls, 0, keepdims), [AbsTensor([5], f)])
        check(make(cls, 3, keepdims), [AbsTensor([2, 1, 3, 2], f)])
    # symbolic axis and shape
    kwargs = {"keepdims": False} if cls in REDUCE else {}
    op, xs = solve_concrete(cls, [3], [f], kwargs=kwargs, seed=1, extra=lambda op, xs: [op.axis == 1])
    assert op.axis == 1
    check(op, xs)
    # invalid axes
    assert False in make(cls, 2).checked_requires([AbsTensor([2, 3], f)])
    assert False in make(cls, -1).checked_requires([AbsTensor([2, 3], f)])


def test_shapes():
    x = AbsTensor([2, 3, 4], DType.int8)
    assert R.ReduceSum(1, keepdims=False).checked_type_transfer([x])[0].shape == [2, 4]
    assert R.ReduceSum(2, keepdims=True).checked_type_transfer([x])[0].shape == [2, 3, 1]
    out = R.ArgMin(0, keepdims=False).checked_type_transfer([x])[0]
    assert out.shape == [3, 4] and out.dtype is DType.int64
    assert R.Softmax(0).checked_type_transfer([AbsTensor([7], DType.float16)])[0].shape == [7]
    # symbolic axis: the solver picks the axis and the output dims follow it
    a, d0, d1, d2 = z3.Ints("a d0 d1 d2")
    op = R.ReduceMax(a, keepdims=False)
    (y,) = op.checked_type_transfer([AbsTensor([d0, d1, d2])])
    s = z3.Solver()
    s.add(*op.checked_requires([AbsTensor([d0, d1, d2])]), d0 == 2, d1 == 3, d2 == 4, y.shape[1] == 4, y.shape[0] == 2)
    assert s.check() == z3.sat and s.model()[a].as_long() == 1


def test_backward_insertion():
    out = [AbsTensor([2, 3], DType.float32)]
    assert R.ReduceMean(0, keepdims=False).checked_deduct(out) == [(3, DType.float32)]
    assert R.ReduceMean(0, keepdims=True).checked_deduct(out) == [(2, DType.float32)]
    assert R.LogSoftmax(0).checked_deduct(out) == [(2, DType.float32)]
    rank, dt = R.ArgMax(0, keepdims=False).checked_deduct([AbsTensor([4], DType.int64)], random.Random(0))[0]
    assert rank == 2 and dt in DType.__members__.values()
    with pytest.raises(ConstraintError):
        R.ReduceSum(0, keepdims=False).checked_deduct([AbsTensor([1] * 5, DType.float32)])
    with pytest.raises(ConstraintError):
        R.ReduceSum(0, keepdims=True).checked_deduct([AbsTensor([], DType.float32)])
    with pytest.raises(ConstraintError):
        R.ArgMax(0, keepdims=True).checked_deduct([AbsTensor([2], DType.float32)])
