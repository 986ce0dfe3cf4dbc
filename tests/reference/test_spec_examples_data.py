"""Hand-computed examples from the ONNX operator spec and the numpy docs (where the op has one),
plus the conventions nnfuzz fixes (wrapping integers, truncating casts), checked exactly: values,
dtype and shape."""
import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.ops.binary import spec as B
from nnfuzz.ops.combine import spec as C
from nnfuzz.ops.layout import spec as L
from nnfuzz.ops.pad import spec as P
from nnfuzz.ops.select import spec as S
from nnfuzz.reference import eval_op


def check(op, inputs, want, dtype):
    (got,) = eval_op(op, *[np.asarray(a) for a in inputs])
    want = np.asarray(want, dtype=dtype)
    assert got.dtype == want.dtype and got.shape == want.shape, f"{op!r}: {got.dtype}{got.shape}"
    assert np.array_equal(got, want), f"{op!r}: got {got.tolist()}, want {want.tolist()}"


# ONNX DepthToSpace, mode CRD (= torch.pixel_shuffle), x = arange(48) as [1, 8, 2, 3], blocksize 2
D2S_CRD = [[[[0, 6, 1, 7, 2, 8], [12, 18, 13, 19, 14, 20], [3, 9, 4, 10, 5, 11], [15, 21, 16, 22, 17, 23]],
            [[24, 30, 25, 31, 26, 32], [36, 42, 37, 43, 38, 44], [27, 33, 28, 34, 29, 35],
             [39, 45, 40, 46, 41, 47]]]]


def test_depth_to_space_crd():
    check(L.DepthToSpace(2), [np.arange(48, dtype=np.float32).reshape(1, 8, 2, 3)], D2S_CRD, np.float32)


def test_space_to_depth():  # C = 1, where torch.pixel_unshuffle and ONNX SpaceToDepth (DCR) agree
    x = np.arange(16, dtype=np.int32).reshape(1, 1, 4, 4)
    want = [[[[0, 2], [8, 10]], [[1, 3], [9, 11]], [[4, 6], [12, 14]], [[5, 7], [13, 15]]]]
    check(L.SpaceToDepth(2), [x], want, np.int32)
    # with C = 2 it is the exact inverse of DepthToSpace (CRD), not ONNX's DCR SpaceToDepth
    check(L.SpaceToDepth(2), [np.array(D2S_CRD, dtype=np.int32)], np.arange(48).reshape(1, 8, 2, 3), np.int32)


M = [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]  # numpy docs of tril/triu


def test_tril_triu_with_diagonal():
    check(L.Tril(-1), [np.array(M, dtype=np.int64)], [[0, 0, 0], [4, 0, 0], [7, 8, 0], [10, 11, 12]], np.int64)
    check(L.Triu(-1), [np.array(M, dtype=np.int64)], [[1, 2, 3], [4, 5, 6], [0, 8, 9], [0, 0, 12]], np.int64)
    check(L.Triu(1), [np.array(M) > 0], [[False, True, True], [False, False, True]] + [[False] * 3] * 2, bool)


def test_roll():  # numpy docs of roll
    x = np.arange(10, dtype=np.int32)
    check(L.Roll(2, 0), [x], [8, 9, 0, 1, 2, 3, 4, 5, 6, 7], np.int32)
    check(L.Roll(-2, 0), [x], [2, 3, 4, 5, 6, 7, 8, 9, 0, 1], np.int32)
    check(L.Roll(1, 1), [x.reshape(2, 5)], [[4, 0, 1, 2, 3], [9, 5, 6, 7, 8]], np.int32)


def test_slice_with_step_split_gather():
    data = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.float32)  # ONNX Slice example
    check(C.Slice(1, 0, 3, 2), [data], [[1, 3], [5, 7]], np.float32)
    check(C.Slice(0, 1, 2, 1), [data], [[5, 6, 7, 8]], np.float32)
    first, second = eval_op(C.Split(0, 2, 4), np.arange(1, 7, dtype=np.int64))  # ONNX Split example
    assert first.tolist() == [1, 2] and second.tolist() == [3, 4, 5, 6]
    check(C.Gather(0, 0, 1, 1, 2), [np.array([[1, 2], [3, 4], [5, 6]])], [[1, 2], [3, 4], [3, 4], [5, 6]], np.int64)


def test_fmod_has_the_sign_of_x():
    check(B.Fmod(), [np.array([-7, 7, -7, 7], dtype=np.float32), np.array([3, 3, -3, -3], dtype=np.float32)],
          [-1, 1, -1, 1], np.float32)
    x = np.array([-4.3, 7.2, 5.0, 4.3, -7.2, 8.0], dtype=np.float32)  # ONNX Mod example, fmod=1
    y = np.array([2.1, -3.4, 8.0, -2.1, 3.4, 5.0], dtype=np.float32)
    (got,) = eval_op(B.Fmod(), x, y)
    np.testing.assert_allclose(got, [-0.1, 0.4, 5.0, 0.1, -0.4, 3.0], rtol=0, atol=1e-6)


def test_integers_wrap():
    i8 = np.int8
    check(B.Add(), [np.array([127, -128], i8), np.array([1, -1], i8)], [-128, 127], i8)
    check(B.Sub(), [np.array([0], np.uint8), np.array([1], np.uint8)], [255], np.uint8)
    check(B.Mul(), [np.array([16, -128], i8), np.array([16, -1], i8)], [0, -128], i8)


def test_cast():
    f = np.array([-2.7, 2.7, -0.5, 0.0], dtype=np.float32)
    check(S.Cast(to=DType.int32), [f], [-2, 2, 0, 0], np.int32)  # truncation toward zero
    check(S.Cast(to=DType.uint8), [np.array([-2.7, 300.5], dtype=np.float32)], [254, 44], np.uint8)  # then wrap
    check(S.Cast(to=DType.bool), [np.array([0, -3, 5], dtype=np.int32)], [False, True, True], bool)
    check(S.Cast(to=DType.bool), [np.array([np.nan, -0.0, 0.1])], [True, False, True], bool)
    check(S.Cast(to=DType.float32), [np.array([True, False])], [1.0, 0.0], np.float32)
    # int64 -> float32 rounds once (via float64 it would round twice, to 2**54)
    check(S.Cast(to=DType.float32), [np.array([2**54 + 2**30 + 1])], [2**54 + 2**31], np.float32)


def test_where_clip():  # ONNX examples
    cond = np.array([[True, False], [True, True]])
    check(S.Where(), [cond, np.array([[1, 2], [3, 4]]), np.array([[9, 8], [7, 6]])], [[1, 8], [3, 4]], np.int64)
    check(S.Clip(min=-1.0, max=1.0), [np.array([-2, 0, 2], dtype=np.float32)], [-1, 0, 1], np.float32)


def test_pads_of_1_2_3_by_2():
    x = np.array([[1, 2, 3]], dtype=np.int32)
    check(P.ReflectPad(2, 2), [x], [[3, 2, 1, 2, 3, 2, 1]], np.int32)
    check(P.ReplicatePad(2, 2), [x], [[1, 1, 1, 2, 3, 3, 3]], np.int32)
    check(P.CircularPad(2, 2), [x[None]], [[[2, 3, 1, 2, 3, 1, 2]]], np.int32)
    check(P.ConstantPad(-1, 2, value=0.0), [x], [[2, 3, 0, 0]], np.int32)  # a negative pad crops
    # torch order: last axis first; (1, 0) pads the last axis at its begin, (0, 1) the rows at their end
    check(P.ConstantPad(1, 0, 0, 1, value=9.0), [np.array([[1, 2], [3, 4]])], [[9, 1, 2], [9, 3, 4], [9, 9, 9]],
          np.int64)
