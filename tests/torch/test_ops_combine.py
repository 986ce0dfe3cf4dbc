import pytest

from oputil import check, has_false, solve_concrete

from nnfuzz.abstract.dtype import DTYPE_ALL, DType
from nnfuzz.ops.combine import spec as C
from nnfuzz.abstract.tensor import AbsTensor







@pytest.mark.parametrize("dt", DTYPE_ALL, ids=str)
def test_every_dtype(dt):
    check(C.Concat(1, arity=2), ([2, 3, 4], dt), ([2, 1, 4], dt))
    check(C.Split(2, 1, 3), ([2, 3, 4], dt))
    check(C.Slice(1, 1, 6, 2), ([2, 6, 4], dt))
    check(C.Gather(1, 0, 5, 5, 1), ([2, 6, 4], dt))


@pytest.mark.parametrize("arity", C.Concat.attr_choices["arity"])
def test_concat_arities(arity):
    op = C.Concat(0, arity=arity)
    assert len(op.inp_ranks) == arity and all(len(r) == arity for r in op.in_dtypes)
    shapes = [[k + 1, 3] for k in range(arity)]
    check(op, *[(s, DType.int32) for s in shapes])
    assert op.checked_type_transfer([AbsTensor(s, DType.int32) for s in shapes])[0].shape == [sum(range(1, arity + 1)), 3]
    check(C.Concat(0, arity=arity), *[([2], DType.bool)] * arity)


@pytest.mark.parametrize("n", C.Split.num_var_param)
def test_split_counts(n):
    op = C.Split(0, *([2] * n))
    assert len(op.out_ranks) == n and all(len(r) == n for r in op.out_dtypes)
    check(op, ([n * 2, 3], DType.float32))
    sizes = list(range(1, n + 1))
    outs = C.Split(4, *sizes).checked_type_transfer([AbsTensor([1, 1, 1, 1, sum(sizes)], DType.int64)])
    assert [o.shape for o in outs] == [[1, 1, 1, 1, s] for s in sizes]
    check(C.Split(4, *sizes), ([1, 1, 1, 1, sum(sizes)], DType.int64))


@pytest.mark.parametrize("op, shape", [
    (C.Slice(0, 0, 1, 1), [5]),
    (C.Slice(0, 0, 5, 7), [5]),
    (C.Slice(4, 2, 3, 1), [1, 2, 1, 2, 3]),
    (C.Slice(2, 1, 4, 3), [2, 1, 4]),
    (C.Gather(0, 0), [1]),
    (C.Gather(3, 2, 2), [2, 1, 2, 3]),
    (C.Gather(0, 1, 0, 1, 0), [2, 5]),
])
def test_attribute_values(op, shape):
    check(op, (shape, DType.float32))


@pytest.mark.parametrize("cls, ranks, n_var, kwargs", [
    (C.Concat, [3, 3], 0, {"arity": 2}),
    (C.Concat, [2, 2, 2, 2], 0, {"arity": 4}),
    (C.Split, [3], 3, {}),
    (C.Split, [1], 2, {}),
    (C.Slice, [3], 0, {}),
    (C.Slice, [1], 0, {}),
    (C.Gather, [2], 3, {}),
    (C.Gather, [4], 1, {}),
])
def test_solved(cls, ranks, n_var, kwargs):
    for seed in range(2):
        op, xs = solve_concrete(cls, ranks, [DType.float32] * len(ranks), n_var=n_var, kwargs=kwargs, seed=seed)
        check(op, *[(x.shape, x.dtype) for x in xs])


def test_solved_split_sizes_cover_the_dim():
    op, xs = solve_concrete(C.Split, [2], [DType.float32], n_var=4)
    assert sum(op.sizes) == xs[0].shape[op.axis] and min(op.sizes) >= 1


f32 = DType.float32


@pytest.mark.parametrize("op, inputs", [
    (C.Concat(1, arity=2), [([2, 3], f32), ([3, 3], f32)]),
    (C.Concat(2, arity=2), [([2, 3], f32), ([2, 3], f32)]),
    (C.Split(0, 1, 1), [([3, 4], f32)]),
    (C.Split(0, 4, 0), [([4, 4], f32)]),
    (C.Split(2, 1, 1), [([2, 4], f32)]),
    (C.Slice(0, 2, 2, 1), [([4], f32)]),
    (C.Slice(0, 0, 5, 1), [([4], f32)]),
    (C.Slice(0, 0, 2, 0), [([4], f32)]),
    (C.Slice(0, 0, 2, -1), [([4], f32)]),
    (C.Slice(1, 0, 1, 1), [([4], f32)]),
    (C.Gather(0, 4), [([4], f32)]),
    (C.Gather(0, -1), [([4], f32)]),
    (C.Gather(1, 0), [([4], f32)]),
])
def test_invalid_attributes_rejected(op, inputs):
    assert has_false(op, *inputs)


def test_deduct_inputs():
    import random

    rng = random.Random(0)
    y = AbsTensor([2, 3], DType.uint8)
    assert C.Concat(0, arity=3).checked_deduct([y], rng) == [(2, DType.uint8)] * 3
    assert C.Split(0, 1, 1).checked_deduct([y, y], rng) == [(2, DType.uint8)]
