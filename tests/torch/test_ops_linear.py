import random

import pytest
from oputil import check_op, solve_concrete

from nnfuzz.abstract.dtype import DType
from nnfuzz.ops.linear import spec as L
from nnfuzz.abstract.tensor import AbsTensor

DTYPES = [row[0] for row in L.MatMul.in_dtypes]


def run(op, shapes, dt):
    check_op(op, [AbsTensor(s, dt) for s in shapes])


MATMUL_SHAPES = [
    ([4], [4]),                    # dot -> rank 0
    ([4], [4, 3]),                 # vector @ matrix
    ([2, 4], [4]),                 # matrix @ vector
    ([3], [2, 3, 5]),              # vector @ batched
    ([2, 1, 3, 4], [4]),           # batched @ vector
    ([2, 3, 4], [4, 5]),           # batched @ matrix
    ([2, 1, 3, 4], [3, 4, 2]),     # broadcast batch dims
    ([1, 3, 2, 4], [2, 1, 4, 3]),  # broadcast both ways
]


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul(shapes, dt):
    run(L.MatMul(), shapes, dt)


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("xshape", [[4], [3, 4], [2, 3, 4], [2, 1, 3, 4]], ids=str)
def test_linear(xshape, dt):
    run(L.Linear(), [xshape, [5, 4], [5]], dt)


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("cshape", [[], [5], [1], [3, 1], [3, 5]], ids=str)
def test_gemm(cshape, dt):
    run(L.Gemm(alpha=2.0, beta=-1.0, trans_a=False, trans_b=False), [[3, 4], [4, 5], cshape], dt)


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm_transposes(trans_a, trans_b):
    a = [4, 3] if trans_a else [3, 4]
    b = [5, 4] if trans_b else [4, 5]
    run(L.Gemm(alpha=0.5, beta=0.5, trans_a=trans_a, trans_b=trans_b), [a, b, [3, 5]], DType.float32)


@pytest.mark.parametrize("ra,rb", [(1, 1), (1, 3), (4, 1), (2, 2), (3, 2), (2, 4), (4, 4)])
def test_matmul_symbolic(ra, rb):
    op, xs = solve_concrete(L.MatMul, [ra, rb], [DType.float32] * 2, seed=ra * 10 + rb)
    run(op, [x.shape for x in xs], DType.float32)


def test_linear_symbolic():
    op, xs = solve_concrete(L.Linear, [3, 2, 1], [DType.float64] * 3)
    run(op, [x.shape for x in xs], DType.float64)


@pytest.mark.parametrize("rc", [0, 1, 2])
def test_gemm_symbolic(rc):
    kw = dict(alpha=1.0, beta=2.0, trans_a=True, trans_b=False)
    op, xs = solve_concrete(L.Gemm, [2, 2, rc], [DType.float32] * 3, kwargs=kw)
    run(op, [x.shape for x in xs], DType.float32)


def test_invalid():
    f32 = DType.float32
    assert False in L.MatMul().checked_requires([AbsTensor([2, 3], f32), AbsTensor([4, 5], f32)])
    assert False in L.MatMul().checked_requires([AbsTensor([2, 2, 3], f32), AbsTensor([3, 3, 5], f32)])
    assert False in L.Linear().checked_requires([AbsTensor([2, 3], f32), AbsTensor([4, 4], f32), AbsTensor([4], f32)])
    gemm = L.Gemm(alpha=1.0, beta=1.0, trans_a=False, trans_b=False)
    assert False in gemm.checked_requires([AbsTensor([3, 4], f32), AbsTensor([4, 5], f32), AbsTensor([2, 5], f32)])
    i32 = DType.int32
    fractional = L.Gemm(alpha=0.5, beta=1.0, trans_a=False, trans_b=False)
    assert False in fractional.checked_requires([AbsTensor([3, 4], i32), AbsTensor([4, 5], i32), AbsTensor([5], i32)])


@pytest.mark.parametrize("out_rank", [0, 1, 2, 3, 4])
def test_matmul_deduct(out_rank):
    rng = random.Random(out_rank)
    for _ in range(10):
        (ra, da), (rb, db) = L.MatMul().checked_deduct([AbsTensor([1] * out_rank, DType.int64)], rng)
        assert da == db == DType.int64
        outs = L.MatMul().checked_type_transfer([AbsTensor([1] * ra, da), AbsTensor([1] * rb, db)])
        assert outs[0].ndims == out_rank


def test_linear_gemm_deduct():
    rng = random.Random(0)
    pairs = L.Linear().checked_deduct([AbsTensor([2, 3, 4], DType.float16)], rng)
    assert pairs == [(3, DType.float16), (2, DType.float16), (1, DType.float16)]
    gemm = L.Gemm(alpha=1.0, beta=1.0, trans_a=False, trans_b=False)
    pairs = gemm.checked_deduct([AbsTensor([2, 3], DType.float32)], rng)
    assert [r for r, _ in pairs[:2]] == [2, 2] and pairs[2][0] in (0, 1, 2)
