import numpy as np
import pytest

from oputil import check, has_false, solve_concrete

from nnfuzz.abstract.dtype import DTYPE_ALL, DType
from nnfuzz.ops.layout import spec as L
from nnfuzz.abstract.tensor import AbsTensor







# one representative (op, input shape) per op, run over every dtype row
SAMPLES = {
    "Reshape": (L.Reshape(6, 4), [2, 3, 4]),
    "Flatten": (L.Flatten(axis=1), [2, 3, 4]),
    "Transpose": (L.Transpose(0, 2), [2, 3, 4]),
    "Permute": (L.Permute(2, 0, 1), [2, 3, 4]),
    "Squeeze": (L.Squeeze(1), [2, 1, 4]),
    "Unsqueeze": (L.Unsqueeze(3), [2, 1, 4]),
    "Expand": (L.Expand(5, 2, 3, 4), [2, 1, 4]),
    "Tile": (L.Tile(2, 1, 3), [2, 1, 4]),
    "DepthToSpace": (L.DepthToSpace(2), [1, 8, 2, 3]),
    "DepthToSpaceDCR": (L.DepthToSpaceDCR(2), [1, 8, 2, 3]),
    "SpaceToDepth": (L.SpaceToDepth(2), [1, 2, 4, 6]),
    "Tril": (L.Tril(1), [3, 4, 5]),
    "Triu": (L.Triu(-1), [3, 4, 5]),
    "Flip": (L.Flip(1), [3, 4, 2]),
    "Roll": (L.Roll(-2, 1), [3, 4, 2]),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("dt", DTYPE_ALL, ids=str)
def test_every_dtype(name, dt):
    op, shape = SAMPLES[name]
    assert (dt,) in op.in_dtypes
    check(op, (shape, dt))


@pytest.mark.parametrize("op, shape", [
    (L.Reshape(1), []),
    (L.Reshape(1, 1, 1, 1, 1), [1]),
    (L.Reshape(2, 3, 2, 1, 2), [6, 4]),
    (L.Flatten(axis=0), [5]),
    (L.Flatten(axis=0), [2, 3, 4]),
    (L.Flatten(axis=2), [2, 3, 4, 5]),
    (L.Flatten(axis=3), [2, 3, 4, 5, 2]),
    (L.Transpose(1, 4), [1, 2, 3, 4, 5]),
    (L.Permute(1, 0), [2, 3]),
    (L.Permute(4, 2, 0, 3, 1), [1, 2, 3, 4, 5]),
    (L.Squeeze(0), [1]),
    (L.Squeeze(4), [2, 3, 2, 3, 1]),
    (L.Unsqueeze(0), []),
    (L.Unsqueeze(0), [3, 2]),
    (L.Expand(3, 2), []),
    (L.Expand(4, 3), [4, 1]),
    (L.Tile(3), [2]),
    (L.DepthToSpace(3), [2, 18, 1, 2]),
    (L.DepthToSpace(1), [1, 3, 2, 2]),  # identity, but valid in torch and ONNX
    (L.DepthToSpaceDCR(3), [2, 18, 1, 2]),
    (L.DepthToSpaceDCR(1), [1, 3, 2, 2]),
    (L.SpaceToDepth(3), [1, 1, 3, 6]),
    (L.Tril(-3), [3, 4]),
    (L.Triu(4), [3, 4]),
    (L.Flip(0), [5]),
    (L.Roll(3, 2), [2, 2, 4, 1]),
])
def test_attribute_values(op, shape):
    for dt in (DType.float32, DType.bool):
        check(op, (shape, dt))


@pytest.mark.parametrize("cls, ranks, n_var, kwargs", [
    (L.Reshape, [3], 2, {}),
    (L.Reshape, [0], 3, {}),
    (L.Flatten, [4], 0, {"axis": 2}),
    (L.Transpose, [4], 0, {}),
    (L.Permute, [4], 4, {}),
    (L.Squeeze, [3], 0, {}),
    (L.Unsqueeze, [2], 0, {}),
    (L.Expand, [2], 4, {}),
    (L.Tile, [3], 3, {}),
    (L.DepthToSpace, [4], 0, {}),
    (L.DepthToSpaceDCR, [4], 0, {}),
    (L.SpaceToDepth, [4], 0, {}),
    (L.Tril, [3], 0, {}),
    (L.Triu, [2], 0, {}),
    (L.Flip, [3], 0, {}),
    (L.Roll, [2], 0, {}),
])
def test_solved(cls, ranks, n_var, kwargs):
    for seed in range(2):
        op, xs = solve_concrete(cls, ranks, [DType.float32] * len(ranks), n_var=n_var, kwargs=kwargs, seed=seed)
        check(op, *[(x.shape, x.dtype) for x in xs])


def test_solved_values_are_meaningful():
    op, xs = solve_concrete(L.Squeeze, [4], [DType.float32])
    assert xs[0].shape[op.axis] == 1
    op, xs = solve_concrete(L.DepthToSpace, [4], [DType.int8], extra=lambda op, xs: [op.blocksize == 3])
    assert xs[0].shape[1] % 9 == 0
    op, xs = solve_concrete(L.Roll, [2], [DType.float32], extra=lambda op, xs: [op.shift < 0])
    assert -xs[0].shape[op.axis] < op.shift < 0


f32 = DType.float32


@pytest.mark.parametrize("op, shape", [
    (L.Reshape(5, 5), [2, 3, 4]),
    (L.Reshape(0, 4), [1, 4]),
    (L.Transpose(1, 1), [2, 3]),
    (L.Transpose(0, 3), [2, 3, 4]),
    (L.Permute(0, 0, 1), [2, 3, 4]),
    (L.Permute(0, 3, 1), [2, 3, 4]),
    (L.Squeeze(0), [2, 1]),
    (L.Squeeze(2), [2, 1]),
    (L.Unsqueeze(3), [2, 1]),
    (L.Expand(3, 4), [2, 4]),
    (L.Tile(0, 2), [2, 4]),
    (L.DepthToSpace(2), [1, 6, 2, 2]),
    (L.DepthToSpace(0), [1, 4, 2, 2]),
    (L.DepthToSpaceDCR(3), [1, 12, 2, 2]),
    (L.SpaceToDepth(2), [1, 1, 3, 4]),
    (L.SpaceToDepth(0), [1, 1, 3, 4]),
    (L.SpaceToDepth(-2), [1, 1, 4, 4]),
    (L.Tril(-4), [3, 4]),
    (L.Triu(5), [3, 4]),
    (L.Flip(2), [3, 4]),
    (L.Roll(4, 1), [3, 4]),
    (L.Roll(-4, 1), [3, 4]),
])
def test_invalid_attributes_rejected(op, shape):
    assert has_false(op, (shape, f32))


def test_deduct_inputs_for_rank_changing_ops():
    import random

    rng = random.Random(0)
    y = [AbsTensor([2, 3], DType.int8)]
    assert L.Squeeze(0).checked_deduct(y, rng) == [(3, DType.int8)]
    assert L.Unsqueeze(0).checked_deduct(y, rng) == [(1, DType.int8)]
    rank, dt = L.Reshape(6, 1).checked_deduct(y, rng)[0]
    assert 0 <= rank <= 5 and dt is DType.int8
    rank, _ = L.Expand(2, 3).checked_deduct(y, rng)[0]
    assert rank <= 2
    assert L.Flatten(axis=1).checked_deduct(y, rng)[0][0] in range(2, 6)


# ONNX's DepthToSpace example (mode DCR, blocksize 2): input channel k holds 9k .. 9k+5 as [2, 3]
D2S_DCR_X = (9 * np.arange(8)[:, None] + np.arange(6)).reshape(1, 8, 2, 3)
D2S_DCR_Y = [[[[0, 18, 1, 19, 2, 20], [36, 54, 37, 55, 38, 56], [3, 21, 4, 22, 5, 23], [39, 57, 40, 58, 41, 59]],
              [[9, 27, 10, 28, 11, 29], [45, 63, 46, 64, 47, 65], [12, 30, 13, 31, 14, 32],
               [48, 66, 49, 67, 50, 68]]]]


def _torch_op(op, x):
    import torch

    from nnfuzz.materialize.torch.lowering import run_op

    (y,) = run_op(op, torch.from_numpy(x))
    return y.numpy()


def test_depth_to_space_dcr_is_onnx_example():
    from nnfuzz.reference import eval_op

    x = D2S_DCR_X.astype(np.float32)
    np.testing.assert_array_equal(_torch_op(L.DepthToSpaceDCR(2), x), np.array(D2S_DCR_Y, np.float32))
    np.testing.assert_array_equal(eval_op(L.DepthToSpaceDCR(2), x)[0], np.array(D2S_DCR_Y, np.float32))
    assert not np.array_equal(_torch_op(L.DepthToSpace(2), x), np.array(D2S_DCR_Y, np.float32))  # CRD differs


@pytest.mark.parametrize("b, shape", [(3, [2, 18, 2, 1]), (2, [1, 12, 3, 2])])
def test_depth_to_space_dcr_is_onnx_reference(b, shape):
    """torch's reshape/permute lowering against ONNX's own reference of DepthToSpace (default mode DCR)."""
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    x = np.random.default_rng(b).integers(-100, 100, size=shape).astype(np.int32)
    node = helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=b)
    graph = helper.make_graph([node], "d2s", [helper.make_tensor_value_info("x", TensorProto.INT32, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, None)])
    (want,) = ReferenceEvaluator(helper.make_model(graph)).run(None, {"x": x})
    np.testing.assert_array_equal(_torch_op(L.DepthToSpaceDCR(b), x), want)
