import random

import pytest
from oputil import check_op, solve_concrete

from nnfuzz.abstract.dtype import DType
from nnfuzz.ops.conv import spec as C
from nnfuzz.abstract.tensor import AbsTensor

DTYPES = [row[0] for row in C.Conv2d.in_dtypes]


def run(op, shapes, dt):
    check_op(op, [AbsTensor(s, dt) for s in shapes])


# (op, x shape, w shape)
CASES = [
    (C.Conv1d(1, 0, 1, 1), [1, 3, 8], [4, 3, 3]),
    (C.Conv1d(2, 1, 2, 2), [2, 4, 9], [6, 2, 3]),
    (C.Conv1d(2, 0, 3, 1), [2, 3, 9], [4, 3, 2]),  # dilated, unpadded: float16 too
    (C.Conv2d(1, 1, 0, 0, 1, 1, 1), [1, 3, 5, 6], [2, 3, 1, 1]),
    (C.Conv2d(2, 1, 1, 0, 1, 2, 2), [1, 4, 7, 8], [2, 2, 3, 2]),
    (C.Conv2d(3, 2, 2, 3, 2, 1, 4), [2, 4, 6, 5], [8, 1, 2, 3]),  # depthwise, pad > kernel
    (C.Conv3d(1, 2, 1, 0, 1, 1, 1, 1, 2, 1), [1, 2, 5, 6, 7], [3, 2, 2, 3, 2]),
    (C.ConvTranspose1d(1, 0, 0, 1, 1), [1, 3, 5], [3, 2, 3]),
    (C.ConvTranspose1d(2, 1, 1, 1, 2), [2, 4, 5], [4, 3, 3]),
    (C.ConvTranspose2d(2, 1, 0, 1, 1, 0, 1, 2, 1), [1, 3, 4, 5], [3, 2, 2, 3]),
    (C.ConvTranspose2d(1, 3, 0, 1, 0, 2, 1, 3, 2), [1, 4, 3, 4], [4, 1, 2, 2]),  # out_pad < stride 3
    (C.ConvTranspose3d(1, 2, 1, 0, 0, 1, 0, 1, 0, 1, 1, 1, 1), [1, 2, 3, 4, 3], [2, 2, 2, 2, 2]),
    # the ort-cpu soak's producer deaths, replayed from a death's search record: float16 segfaults in backward
    (C.ConvTranspose2d(1, 2, 1, 1, 0, 0, 1, 31, 1), [12, 10, 2, 2], [10, 13, 3, 1]),
]


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("case", CASES, ids=lambda c: repr(c[0]))
def test_conv(case, dt):
    op, x, w = case
    if dt is DType.float16 and any(d > 1 and p > 0 for d, p in zip(op.dilation, op.padding)):
        # torch's CPU float16 dilated convolution may segfault on padded dilated dims (a transposed one's input
        # gradient is such a convolution: the value search's backward): excluded
        assert False in op.checked_requires([AbsTensor(x, dt), AbsTensor(w, dt)])
        return
    run(op, [x, w], dt)


SYMBOLIC = [C.Conv1d, C.Conv2d, C.Conv3d, C.ConvTranspose1d, C.ConvTranspose2d, C.ConvTranspose3d]


@pytest.mark.parametrize("cls", SYMBOLIC, ids=lambda c: c.__name__)
def test_symbolic(cls):
    rank = cls.inp_ranks[0][0]
    op, xs = solve_concrete(cls, [rank, rank], [DType.float32] * 2, max_dim=12)
    run(op, [x.shape for x in xs], DType.float32)


def test_symbolic_pinned():
    """Strides, dilations and groups above 1 are reachable."""
    def pin(op, xs):
        return [op.stride[0] == 2, op.dilation[1] == 2, op.groups == 2, op.padding[0] == 1]

    op, xs = solve_concrete(C.Conv2d, [4, 4], [DType.float32] * 2, extra=pin, max_dim=12)
    assert op.stride[0] == 2 and op.groups == 2
    run(op, [x.shape for x in xs], DType.float32)

    def pin_half(op, xs):
        return [op.dilation[0] == 2, op.dilation[1] == 1, op.padding[1] == 2]

    op, xs = solve_concrete(C.Conv2d, [4, 4], [DType.float16] * 2, extra=pin_half, max_dim=12)
    assert op.padding[0] == 0  # float16: a dilated dim is unpadded
    run(op, [x.shape for x in xs], DType.float16)

    def pin_t(op, xs):
        return [op.stride[1] == 3, op.output_padding[1] == 2, op.groups == 2]

    op, xs = solve_concrete(C.ConvTranspose2d, [4, 4], [DType.float32] * 2, extra=pin_t, max_dim=12)
    assert op.output_padding == (op.output_padding[0], 2)
    run(op, [x.shape for x in xs], DType.float32)


def test_invalid():
    f32 = DType.float32
    x, w = AbsTensor([1, 4, 5, 5], f32), AbsTensor([2, 2, 3, 3], f32)
    assert False in C.Conv2d(1, 1, 0, 0, 1, 1, 3).checked_requires([x, w])   # 4 channels, 3 groups
    assert False in C.Conv2d(0, 1, 0, 0, 1, 1, 2).checked_requires([x, w])   # stride 0
    assert False in C.Conv2d(1, 1, -1, 0, 1, 1, 2).checked_requires([x, w])  # negative pad
    assert False in C.Conv2d(1, 1, 0, 0, 3, 1, 2).checked_requires([x, w])   # dilated kernel too big
    xt, wt = AbsTensor([1, 4, 5], f32), AbsTensor([4, 2, 3], f32)
    assert False in C.ConvTranspose1d(2, 0, 2, 1, 1).checked_requires([xt, wt])  # out_pad >= stride, dilation
    assert False in C.ConvTranspose1d(1, 0, 1, 2, 1).checked_requires([xt, wt])  # out_pad >= stride (ORT refuses)
    assert False in C.ConvTranspose1d(1, 4, 0, 1, 1).checked_requires([xt, wt])  # empty output


def test_transposed_conv_padding_crops_at_most_the_kept_length():
    """A tf-cpu campaign timed out (a false alarm) on this ConvTranspose3d: pads 202/37/246 kept 4x1x1 of
    a 73M-element uncropped result, which TF's conv_transpose computes before cropping."""
    f32 = DType.float32
    x, w = AbsTensor([5, 3, 26, 1, 7], f32), AbsTensor([3, 1, 106, 2, 2], f32)
    op = C.ConvTranspose3d(12, 1, 71, 202, 37, 246, 2, 0, 11, 1, 74, 55, 1)
    assert [int(d) for d in op.checked_type_transfer([x, w])[0].shape] == [5, 1, 4, 1, 1]
    assert False in op.checked_requires([x, w])
    xt, wt = AbsTensor([1, 4, 5], f32), AbsTensor([4, 2, 3], f32)
    assert all(C.ConvTranspose1d(1, 2, 0, 1, 1).checked_requires([xt, wt]))   # pads 2 + 2 keep 3 of 7
    assert False in C.ConvTranspose1d(1, 3, 0, 1, 1).checked_requires([xt, wt])  # pads 3 + 3 keep 1 of 7


def test_deduct():
    rng = random.Random(0)
    for cls in (C.Conv2d(1, 1, 0, 0, 1, 1, 1), C.ConvTranspose1d(1, 0, 0, 1, 1)):
        rank = cls.out_ranks[0][0]
        pairs = cls.checked_deduct([AbsTensor([1] * rank, DType.float16)], rng)
        assert pairs == [(rank, DType.float16)] * 2
