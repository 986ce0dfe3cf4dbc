import pytest
import z3
from oputil import check_op as check, solve_concrete

from nnfuzz.abstract.dtype import DTYPE_ALL, DType
from nnfuzz.ops.select import spec as S
from nnfuzz.abstract.tensor import AbsTensor




@pytest.mark.parametrize("row", S.Where.in_dtypes, ids=[str(r[1]) for r in S.Where.in_dtypes])
def test_where_rows(row):
    for shapes in ([[4, 1, 3], [3], [2, 1, 1, 1]], [[], [], []], [[2], [], []], [[], [3], []]):
        xs = [AbsTensor(s, d) for s, d in zip(shapes, row)]
        check(S.Where(), xs)


def test_where_rules():
    op = S.Where()
    f = DType.float32
    check(op, [AbsTensor([], DType.bool), AbsTensor([2], f), AbsTensor([], f)])
    out = op.checked_type_transfer([AbsTensor([2, 1], DType.bool), AbsTensor([3], f), AbsTensor([1, 1, 1], f)])
    assert out[0].shape == [1, 2, 3]
    assert False in op.checked_requires([AbsTensor([2], DType.bool), AbsTensor([3], f), AbsTensor([1], f)])
    assert op.checked_deduct([AbsTensor([2, 2], DType.int8)]) == [(2, DType.bool), (2, DType.int8), (2, DType.int8)]
    for seed, ranks in enumerate([(1, 3, 2), (0, 2, 4), (3, 3, 3)]):
        cop, xs = solve_concrete(S.Where, list(ranks), [DType.bool, f, f], seed=seed)
        check(cop, xs)


@pytest.mark.parametrize("row", S.Clip.in_dtypes, ids=[str(r[0]) for r in S.Clip.in_dtypes])
@pytest.mark.parametrize("lo,hi", [(-6.0, 6.0), (-1.0, 0.0), (0.0, 0.0), (0.0, 1.0)])
def test_clip_rows(row, lo, hi):
    check(S.Clip(min=lo, max=hi), [AbsTensor([2, 3], row[0])])
    check(S.Clip(min=lo, max=hi), [AbsTensor([], row[0])])


def test_clip_rank0_and_solve():
    check(S.Clip(min=-1.0, max=1.0), [AbsTensor([], DType.float64)])
    op, xs = solve_concrete(S.Clip, [3], [DType.float32], kwargs={"min": -1.0, "max": 6.0})
    assert op.min == -1.0
    check(op, xs)


@pytest.mark.parametrize("to", DTYPE_ALL, ids=str)
def test_cast_all_pairs(to):
    op = S.Cast(to=to)
    assert (to,) not in op.in_dtypes and len(op.in_dtypes) == len(DTYPE_ALL) - 1
    for (src,) in op.in_dtypes:
        check(op, [AbsTensor([2, 3], src)])
        check(op, [AbsTensor([], src)])


def test_cast_rules():
    op = S.Cast(to=DType.int8)
    with pytest.raises(Exception):
        op.checked_type_transfer([AbsTensor([2], DType.int8)])  # no identity cast
    ded = op.checked_deduct([AbsTensor([2, 3], DType.int8)])
    assert ded[0][0] == 2 and ded[0][1] is not DType.int8
    cop, xs = solve_concrete(S.Cast, [2], [DType.float16], kwargs={"to": DType.bool})
    check(cop, xs)
    assert S.Cast.attr_choices["to"] == DTYPE_ALL
    a = z3.Int("a")
    assert S.Cast(to=DType.float64).checked_type_transfer([AbsTensor([a], DType.uint8)])[0].shape == [a]
