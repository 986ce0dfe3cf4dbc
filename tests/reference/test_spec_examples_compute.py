"""Hand-computed examples of the numpy reference evals of the compute families (reduce, pool, conv,
linear, norm, resize): each expected array is worked out from the operator's specification, not
from any framework."""
import math

import numpy as np

from nnfuzz.ops.conv import spec as C
from nnfuzz.ops.linear import spec as L
from nnfuzz.ops.norm import spec as N
from nnfuzz.ops.pool import spec as P
from nnfuzz.ops.reduce import spec as R
from nnfuzz.ops.resize import spec as RS
from nnfuzz.reference import eval_op


def ev(op, *arrays):
    (out,) = eval_op(op, *[np.asarray(a) for a in arrays])
    return out


def row(*values, dtype=np.float32):
    """values as a [1, 1, W] tensor (batch 1, channel 1)."""
    return np.array(values, dtype=dtype).reshape(1, 1, -1)


def test_conv1d_stride_padding_and_groups():
    # padded [0,1,2,3,4,5,0], windows at 0, 2, 4 against [1,0,-1]: 0-2, 2-4, 4-0
    y = ev(C.Conv1d(2, 1, 1, 1), row(1, 2, 3, 4, 5), row(1, 0, -1))
    np.testing.assert_array_equal(y, row(-2, -2, 4))
    # groups=2: each output channel sees only its own input channel
    x = np.array([1, 2], np.float32).reshape(1, 2, 1)
    w = np.array([3, 5], np.float32).reshape(2, 1, 1)
    np.testing.assert_array_equal(ev(C.Conv1d(1, 0, 1, 2), x, w), np.array([3, 10], np.float32).reshape(1, 2, 1))


def test_conv_transpose1d_stride_padding_output_padding():
    # x[i] * [1, 10, 100] added at 2i..2i+2: [1,10,102,20,203,30,300] (+ one output-padding zero)
    w = row(1, 10, 100)
    np.testing.assert_array_equal(ev(C.ConvTranspose1d(2, 0, 0, 1, 1), row(1, 2, 3), w),
                                  row(1, 10, 102, 20, 203, 30, 300))
    # padding 1 crops one position at each end of the full [1,10,102,20,203,30,300,0]
    np.testing.assert_array_equal(ev(C.ConvTranspose1d(2, 1, 1, 1, 1), row(1, 2, 3), w),
                                  row(10, 102, 20, 203, 30, 300))


def test_max_pool_with_dilation():
    # kernel 2 dilated by 2 reads (0,2), (1,3), (2,4)
    np.testing.assert_array_equal(ev(P.MaxPool1d(2, 1, 0, 2), row(1, 5, 2, 4, 3)), row(2, 5, 3))


def test_avg_pool_count_include_pad_at_a_padded_border():
    # padded [0,3,6,9,12,0], kernel 3, stride 3: windows [0,3,6] and [9,12,0]
    x = row(3, 6, 9, 12)
    np.testing.assert_array_equal(ev(P.AvgPool1d(3, 3, 1, count_include_pad=True), x), row(3, 7))
    np.testing.assert_array_equal(ev(P.AvgPool1d(3, 3, 1, count_include_pad=False), x), row(4.5, 10.5))


def test_softmax_and_log_softmax():
    x = np.array([0, math.log(2), math.log(3)], np.float32)
    np.testing.assert_allclose(ev(R.Softmax(0), x), [1 / 6, 2 / 6, 3 / 6], rtol=1e-6)
    np.testing.assert_allclose(ev(R.LogSoftmax(0), x), np.log([1 / 6, 2 / 6, 3 / 6]), rtol=1e-6)


def test_logsumexp_and_l2():
    x = np.array([[0, math.log(3)], [3, 4]], np.float32)
    np.testing.assert_allclose(ev(R.LogSumExp(1, keepdims=False), x[:1]), [math.log(4)], rtol=1e-6)
    np.testing.assert_allclose(ev(R.ReduceL2(1, keepdims=True), x[1:]), [[5]], rtol=1e-6)


def test_argmax_argmin_ties_take_the_first():
    x = np.array([[1, 3, 3], [2, 2, 1]], np.int32)
    np.testing.assert_array_equal(ev(R.ArgMax(1, keepdims=False), x), [1, 0])
    np.testing.assert_array_equal(ev(R.ArgMin(1, keepdims=True), x), [[0], [2]])
    np.testing.assert_array_equal(ev(R.ArgMin(0, keepdims=False), np.array([1, 0, 0], np.float32)), 1)


def test_integer_sums_wrap():
    big = np.iinfo(np.int32).max
    y = ev(R.CumSum(0), np.array([big, 1, 1], np.int32))
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, [big, -big - 1, -big])
    y = ev(R.ReduceSum(0, keepdims=False), np.array([100, 100, 100], np.int8))
    assert y.dtype == np.int8 and y == 300 - 256


def test_layer_norm():
    eps = 2.0 ** -16
    want = np.array([-1, 0, 1]) / math.sqrt(2 / 3 + eps)  # mean 2, biased variance 2/3
    x = np.array([1, 2, 3], np.float32)
    np.testing.assert_allclose(ev(N.LayerNorm(k=1, affine=False, eps=eps), x), want, rtol=1e-6)
    w, b = np.array([2, 2, 2], np.float32), np.array([1, 1, 1], np.float32)
    np.testing.assert_allclose(ev(N.LayerNorm(k=1, affine=True, eps=eps), x, w, b), 2 * want + 1, rtol=1e-6)


def test_batch_norm_fixed_running_statistics():
    # C = 3: mean linspace(-0.5, 0.5) = [-0.5, 0, 0.5], var linspace(0.5, 2) = [0.5, 1.25, 2]
    x = np.array([0.5, 1, 0.5], np.float32).reshape(1, 3, 1)
    w, b = np.array([1, 2, 1], np.float32), np.array([0, 1, 0], np.float32)
    want = [1 / math.sqrt(0.625), 2 / math.sqrt(1.375) + 1, 0]
    np.testing.assert_allclose(ev(N.BatchNorm(eps=0.125), x, w, b).ravel(), want, rtol=1e-6)


def test_matmul_and_gemm():
    assert ev(L.MatMul(), np.array([1, 2, 3], np.int32), np.array([4, 5, 6], np.int32)) == 32
    a, b, c = np.array([[1, 2]], np.float32), np.array([[3, 4]], np.float32), np.array([10], np.float32)
    np.testing.assert_array_equal(ev(L.Gemm(alpha=2.0, beta=-1.0, trans_a=False, trans_b=True), a, b, c), [[12]])


def test_resize_nearest_and_linear_of_1_2_to_4():
    x = row(1, 2)
    np.testing.assert_array_equal(ev(RS.ResizeNearest(4), x), row(1, 1, 2, 2))  # floor(i * 2 / 4)
    # align_corners: sources i/3; half-pixel: (i + 0.5)/2 - 0.5 = [-0.25 -> 0, 0.25, 0.75, 1.25 -> 1]
    np.testing.assert_allclose(ev(RS.ResizeLinear(4, align_corners=True), x), row(1, 4 / 3, 5 / 3, 2), rtol=1e-6)
    np.testing.assert_allclose(ev(RS.ResizeLinear(4, align_corners=False), x), row(1, 1.25, 1.75, 2), rtol=1e-6)


def test_resize_cubic_uses_a_minus_0_75():
    # width 4 -> 2, half-pixel sources 0.5 and 2.5: taps (clamped) [0,0,1,2] and [1,2,3,3] with
    # weights [-0.09375, 0.59375, 0.59375, -0.09375]; height 1 -> 1 is the identity
    x = np.array([1, 2, 4, 8], np.float32).reshape(1, 1, 1, 4)
    y = ev(RS.ResizeCubic(1, 2, align_corners=False), x)
    np.testing.assert_allclose(y, np.array([1.3125, 6.1875], np.float32).reshape(1, 1, 1, 2), rtol=1e-6)
