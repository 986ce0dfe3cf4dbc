import pytest

from oputil import check_op, solve_concrete

from nnfuzz.abstract.dtype import DType
from nnfuzz.ops.resize import spec as R
from nnfuzz.abstract.tensor import AbsTensor

OK = ("ok", "unsupported")
f32 = DType.float32


def check(op, shape, dt):
    """check_op on one input."""
    return check_op(op, [(shape, dt)])


SAMPLES = [
    (R.ResizeNearest(8, 10), [2, 3, 4, 5]),
    (R.ResizeLinear(7, align_corners=False), [2, 3, 4]),
    (R.ResizeCubic(7, 3, align_corners=True), [1, 2, 4, 5]),
]


@pytest.mark.parametrize("op, shape", SAMPLES, ids=lambda v: type(v).__name__ if not isinstance(v, list) else "")
def test_every_dtype(op, shape):
    for (dt,) in op.in_dtypes:
        assert check(op, shape, dt) in OK, dt


@pytest.mark.parametrize("op, shape", [
    (R.ResizeNearest(9), [1, 2, 3]),  # 9 = 3 x 3
    (R.ResizeNearest(6, 3, 4), [1, 1, 3, 3, 2]),
    (R.ResizeLinear(5, 1, align_corners=True), [2, 1, 3, 4]),
    (R.ResizeLinear(1, align_corners=True), [1, 1, 3]),
    (R.ResizeLinear(3, 2, 4, align_corners=False), [1, 2, 2, 3, 1]),
    (R.ResizeLinear(3, 5, 2, align_corners=True), [1, 1, 4, 1, 3]),
    (R.ResizeCubic(1, 6, align_corners=False), [1, 1, 5, 2]),
    (R.ResizeCubic(5, 5, align_corners=True), [1, 1, 1, 1]),
])
def test_attribute_values(op, shape):
    assert check(op, shape, f32) in OK
    assert check(op, shape, DType.float16) in OK


@pytest.mark.parametrize("cls, n_var, kwargs", [
    (R.ResizeNearest, 1, {}),
    (R.ResizeNearest, 3, {}),
    (R.ResizeLinear, 2, {"align_corners": True}),
    (R.ResizeLinear, 3, {"align_corners": False}),
    (R.ResizeCubic, 2, {"align_corners": False}),
])
def test_solved(cls, n_var, kwargs):
    for seed in range(2):
        op, (x,) = solve_concrete(cls, [n_var + 2], [f32], n_var=n_var, kwargs=kwargs, seed=seed)
        assert check(op, x.shape, x.dtype) in OK


def test_rank_follows_size_count():
    assert R.ResizeNearest(2).inp_ranks == [(3,)]
    assert R.ResizeLinear(2, 2, 2, align_corners=False).out_ranks == [(5,)]
    assert R.ResizeCubic.num_var_param == [2]


def test_invalid_attributes_rejected():
    x = [AbsTensor([1, 2, 3, 4], f32)]
    assert False in R.ResizeNearest(0, 3).checked_requires(x)
    assert False in R.ResizeCubic(3, -1, align_corners=False).checked_requires(x)
