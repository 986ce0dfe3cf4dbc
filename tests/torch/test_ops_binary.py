import pytest
import z3
from oputil import check_op as check, solve_concrete

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.ops.binary import spec as B
from nnfuzz.abstract.tensor import AbsTensor

OPS = sorted(
    (c for c in vars(B).values() if isinstance(c, type) and issubclass(c, AbsOpBase) and not c._abstract),
    key=lambda c: c.__name__,
)
CASES = [(cls, row) for cls in OPS for row in cls.in_dtypes]




def test_op_count():
    assert len(OPS) >= 12


@pytest.mark.parametrize("cls,row", CASES, ids=[f"{c.__name__}-{'-'.join(map(str, r))}" for c, r in CASES])
def test_every_dtype_row(cls, row):
    shapes = [[2, 1, 3], [4, 1]] if len(row) == 2 else [[2, 3]]
    check(cls(), [AbsTensor(s, d) for s, d in zip(shapes, row)])
    # all-0-d operands (the exporter would cast 0-d float64 to float32 without f64_scalar_safe)
    check(cls(), [AbsTensor([], d) for d in row])
    if len(row) == 2:
        check(cls(), [AbsTensor([], row[0]), AbsTensor([3], row[1])])


@pytest.mark.parametrize("shapes", [([], [2, 3]), ([3], []), ([], []), ([1, 3, 1, 2], [3, 4, 1]), ([2, 3], [2, 3])])
@pytest.mark.parametrize("cls", [B.Add, B.Div, B.Less, B.And])
def test_broadcast_shapes(cls, shapes):
    row = cls.in_dtypes[-1] if cls is B.And else (DType.float32, DType.float32)
    check(cls(), [AbsTensor(s, d) for s, d in zip(shapes, row)])


def test_broadcast_rules():
    op = B.Mul()
    out = op.checked_type_transfer([AbsTensor([5, 1, 3]), AbsTensor([4, 1])])
    assert out[0].shape == [5, 4, 3]
    assert False in op.checked_requires([AbsTensor([2, 3]), AbsTensor([4])])
    assert False in op.checked_requires([AbsTensor([2, 3]), AbsTensor([3, 3])])
    assert op.checked_requires([AbsTensor([1, 3]), AbsTensor([7, 1])]) == []
    # symbolic: the rule is an Or over each right-aligned pair
    a, b = z3.Ints("a b")
    (pred,) = op.checked_requires([AbsTensor([a]), AbsTensor([2, b])])
    s = z3.Solver()
    s.add(pred, a == 3, b == 2)
    assert s.check() == z3.unsat


@pytest.mark.parametrize("cls", [B.Add, B.Pow, B.Equal, B.Xor])
@pytest.mark.parametrize("ranks", [(3, 2), (1, 4), (0, 2)])
def test_solve_concrete(cls, ranks):
    row = cls.in_dtypes[-1]
    op, xs = solve_concrete(cls, list(ranks), list(row), seed=sum(ranks),
                            extra=lambda op, xs: [xs[0].shape[-1] == 1] if xs[0].ndims else [])
    check(op, xs)


def test_backward_insertion():
    assert B.Add().checked_deduct([AbsTensor([2, 3], DType.int32)]) == [(2, DType.int32), (2, DType.int32)]
    ded = B.Greater().checked_deduct([AbsTensor([4], DType.bool)])
    assert [r for r, _ in ded] == [1, 1] and ded[0][1] == ded[1][1]
    assert B.Not().checked_deduct([AbsTensor([], DType.bool)]) == [(0, DType.bool)]
