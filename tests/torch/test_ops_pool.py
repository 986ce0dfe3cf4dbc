import pytest
import torch
from oputil import check_op, solve_concrete

from nnfuzz.abstract.dtype import DType
from nnfuzz.ops.pool import spec as P
from nnfuzz.abstract.tensor import AbsTensor


def run(op, shape, dt):
    check_op(op, [AbsTensor(shape, dt)])


def rows(cls):
    return [row[0] for row in cls.in_dtypes]


# (op, input shape)
CASES = [
    (P.MaxPool1d(3, 2, 1, 1), [2, 3, 9]),
    (P.MaxPool1d(2, 1, 0, 3), [1, 2, 7]),
    (P.MaxPool2d(3, 2, 2, 1, 1, 1, 1, 1), [1, 2, 7, 8]),
    (P.MaxPool2d(2, 2, 1, 1, 0, 0, 2, 3), [1, 2, 6, 6]),
    (P.MaxPool3d(2, 1, 3, 1, 2, 2, 1, 0, 1, 1, 1, 1), [1, 2, 4, 5, 6]),
    (P.AvgPool1d(3, 2, 1, count_include_pad=True), [2, 3, 9]),
    (P.AvgPool1d(2, 3, 1, count_include_pad=False), [1, 3, 8]),
    (P.AvgPool2d(3, 2, 2, 1, 1, 1, count_include_pad=False), [1, 2, 7, 8]),
    (P.AvgPool2d(3, 2, 2, 1, 1, 1, count_include_pad=True), [1, 2, 7, 8]),
    (P.AvgPool3d(2, 1, 3, 1, 2, 2, 1, 0, 1, count_include_pad=False), [1, 2, 4, 5, 6]),
    (P.GlobalAvgPool(), [2, 3, 5]),
    (P.GlobalAvgPool(), [2, 3, 5, 4]),
    (P.GlobalAvgPool(), [1, 3, 2, 3, 2]),
    (P.GlobalMaxPool(), [2, 3, 5]),
    (P.GlobalMaxPool(), [2, 3, 5, 4]),
    (P.GlobalMaxPool(), [1, 3, 2, 3, 2]),
    (P.AdaptiveAvgPool2d(2, 3), [2, 3, 4, 9]),
    (P.AdaptiveAvgPool2d(1, 1), [1, 2, 3, 5]),
    (P.AdaptiveMaxPool2d(2, 3), [2, 3, 4, 9]),
    (P.AdaptiveMaxPool2d(3, 1), [1, 2, 6, 5]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]!r}-{c[1]}")
def test_pool(case):
    op, shape = case
    for dt in rows(type(op)):
        run(op, shape, dt)


SYMBOLIC = [
    (P.MaxPool1d, {}), (P.MaxPool2d, {}), (P.MaxPool3d, {}),
    (P.AvgPool1d, {"count_include_pad": True}), (P.AvgPool2d, {"count_include_pad": False}),
    (P.AvgPool3d, {"count_include_pad": True}),
    (P.AdaptiveAvgPool2d, {}), (P.AdaptiveMaxPool2d, {}),
]


@pytest.mark.parametrize("cls,kw", SYMBOLIC, ids=lambda c: getattr(c, "__name__", ""))
def test_symbolic(cls, kw):
    rank = cls.inp_ranks[0][0]
    for seed in range(2):
        op, xs = solve_concrete(cls, [rank], [DType.float32], kwargs=kw, seed=seed)
        run(op, xs[0].shape, DType.float32)


def test_symbolic_pinned():
    def pin(op, xs):
        return [op.kernel[0] == 4, op.padding[0] == 2, op.stride[1] == 2, op.dilation[1] == 2]

    op, xs = solve_concrete(P.MaxPool2d, [4], [DType.float32], extra=pin)
    assert op.padding[1] == 0  # dilated dims are unpadded
    run(op, xs[0].shape, DType.float32)

    op, xs = solve_concrete(P.AdaptiveAvgPool2d, [4], [DType.float32],
                            extra=lambda op, xs: [op.out_h == 3, op.out_w == 2])
    assert xs[0].shape[2] % 3 == 0 and xs[0].shape[3] % 2 == 0
    run(op, xs[0].shape, DType.float32)


def test_global_symbolic():
    for rank in (3, 4, 5):
        op, xs = solve_concrete(P.GlobalMaxPool, [rank], [DType.int64])
        run(op, xs[0].shape, DType.int64)


def test_invalid():
    x = AbsTensor([1, 2, 6, 6], DType.float32)
    assert False in P.MaxPool2d(2, 2, 1, 1, 2, 0, 1, 1).checked_requires([x])  # pad > kernel / 2
    assert False in P.MaxPool2d(2, 2, 1, 1, 1, 0, 2, 1).checked_requires([x])  # padded and dilated
    assert False in P.MaxPool2d(7, 2, 1, 1, 0, 0, 1, 1).checked_requires([x])  # kernel bigger than input
    assert False in P.AvgPool1d(2, 0, 0, count_include_pad=True).checked_requires([AbsTensor([1, 2, 5], DType.float32)])
    assert False in P.AdaptiveAvgPool2d(4, 3).checked_requires([x])  # 6 % 4 != 0


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16])
def test_integer_max_pool3d_of_a_channels_last_tensor(dtype):
    """torch's channels-last integer max_pool3d refuses a D*H*W over its dtype's signed max; an openvino-cpu
    campaign met it as an nnfuzz error during value-aware generation (MaxPool3d of u8[13, 1, 7, 2, 14])."""
    from nnfuzz.ops.pool.torch import _max_pool

    op = P.MaxPool3d(3, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1)
    x = torch.arange(2 * 40 ** 3).reshape(1, 2, 40, 40, 40).to(dtype).to(memory_format=torch.channels_last_3d)
    got = _max_pool(op, x)
    want = torch.nn.functional.max_pool3d(x.contiguous().int(), (3, 3, 3), (2, 2, 2), (1, 1, 1)).to(dtype)
    assert torch.equal(got, want)
