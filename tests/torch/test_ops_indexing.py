"""The indexing ops end to end on the direct ONNX path (torch, numpy reference, ONNX checker and shape
inference, real ORT), their constant indices, ties, and the rules' edges."""
import random

import numpy as np
import pytest
from direct_check import check_direct_on as check_direct
from oputil import check, has_false, solve_concrete

from nnfuzz.abstract.dtype import DTYPE_ALL, DTYPE_FLOATS, DTYPE_NUMERIC, DType
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError
from nnfuzz.ops.indexing import spec as I
from nnfuzz.reference.registry import eval_op

f32, i64, i32, bf16 = DType.float32, DType.int64, DType.int32, DType.bfloat16


def ort_outcome(dt, missing=()):
    """What ORT gives: bfloat16 cannot be fed through its Python API, ``missing`` dtypes have no kernel."""
    return "unsupported" if dt is bf16 or dt in missing else "ok"


@pytest.mark.parametrize("dt", DTYPE_NUMERIC, ids=str)
def test_topk_every_dtype(dt):
    assert check_direct(I.TopK(1, 2, largest=True), ([3, 5, 2], dt)) == ort_outcome(dt)
    assert check_direct(I.TopK(0, 1, largest=False), ([4], dt)) == ort_outcome(dt)


@pytest.mark.parametrize("dt", DTYPE_ALL, ids=str)
def test_moving_ops_every_dtype(dt):
    assert check_direct(I.GatherElements(1, 4, pick=1), ([2, 3, 2], dt)) == ort_outcome(dt)
    assert check_direct(I.ScatterElements(0, reduction="none", pick=2), ([4, 3], dt), ([2, 3], dt)) == ort_outcome(dt)
    assert check_direct(I.ScatterND(k=2, tail=1, reduction="none", pick=3), ([3, 2, 4], dt), ([3, 4], dt)) == \
        ort_outcome(dt)
    assert check_direct(I.ReverseSequence(batch_axis=0, pick=0), ([3, 4, 2], dt)) == ort_outcome(dt)
    assert check_direct(I.ReverseSequence(batch_axis=1, pick=1), ([5, 2], dt)) == ort_outcome(dt)


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("dt", [DType.float16, f32, DType.float64, DType.int8, i32, i64, DType.uint8], ids=str)
def test_scatter_reductions(reduction, dt):
    if dt not in I.REDUCTIONS[reduction]:
        assert (dt, dt) not in I.ScatterElements(0, reduction=reduction, pick=0).in_dtypes
        return
    # ORT's ScatterElements (add, mul) and ScatterND (every reduction) have no float16 kernel
    elements_missing = (DType.float16,) if reduction in ("add", "mul") else ()
    assert check_direct(I.ScatterElements(1, reduction=reduction, pick=0), ([2, 3], dt), ([2, 5], dt)) == \
        ort_outcome(dt, missing=elements_missing)
    assert check_direct(I.ScatterND(k=1, tail=1, reduction=reduction, pick=1), ([4, 3], dt), ([2, 3], dt)) == \
        ort_outcome(dt, missing=(DType.float16,))


def test_scatter_elements_add_sums_repeated_targets():
    op = I.ScatterElements(0, reduction="add", pick=0)
    data, upd = np.zeros([2, 1], np.float32), np.ones([6, 1], np.float32)
    (got,) = eval_op(op, data, upd)
    idx = I.scatter_element_indices(op, [2, 1], [6, 1])
    np.testing.assert_array_equal(got[:, 0], np.bincount(idx[:, 0], minlength=2))
    assert check_direct(op, ([2, 1], f32), ([6, 1], f32), arrays=[data, upd]) == "ok"


def test_topk_ties_come_lower_index_first():
    x = np.array([[3, 1, 3, 1, 3], [0, 0, 0, 0, 0]], np.int32)
    values, idx = eval_op(I.TopK(1, 3, largest=True), x)
    np.testing.assert_array_equal(idx, [[0, 2, 4], [0, 1, 2]])
    values, idx = eval_op(I.TopK(1, 2, largest=False), x)
    np.testing.assert_array_equal(idx, [[1, 3], [0, 1]])
    for largest in (True, False):
        assert check_direct(I.TopK(1, 3, largest=largest), ([2, 5], i32), arrays=[x]) == "ok"


def test_one_hot_wraps_negative_indices_and_blanks_out_of_range():
    x = np.array([-1, 0, 3, 4, -5], np.int64)
    (got,) = eval_op(I.OneHot(1, 4, values=(3, 7), dtype=f32), x)
    want = np.full([5, 4], 3, np.float32)
    want[0, 3] = want[1, 0] = want[2, 3] = 7
    np.testing.assert_array_equal(got, want)
    assert check_direct(I.OneHot(1, 4, values=(3, 7), dtype=f32), ([5], i64), arrays=[x]) == "ok"


@pytest.mark.parametrize("out", [f32, DType.float64, i32, i64, DType.uint8], ids=str)
def test_one_hot_output_dtypes(out):
    # ORT's OneHot kernels with an int64 depth: int64 indices with float or int64 values only
    missing = (DType.float64, DType.uint8, i32)
    assert check_direct(I.OneHot(0, 3, values=(1, 0), dtype=out), ([2, 3], i64)) == ort_outcome(out, missing)


def test_one_hot_index_dtypes_ort_lacks():
    assert check_direct(I.OneHot(2, 5, values=(0, 1), dtype=f32), ([2, 3], DType.int16)) == "unsupported"


@pytest.mark.parametrize("dt", I.RANGE_DTYPES, ids=str)
def test_range_every_dtype(dt):
    delta = 0.5 if dt.is_float else -3
    op = I.Range(1, -2, delta=delta, dtype=dt)
    assert check_direct(op, ([2, 6], DType.bool)) == "ok"
    (got,) = eval_op(op, np.zeros([2, 6], bool))
    np.testing.assert_array_equal(got, (-2 + delta * np.arange(6)).astype(dt.numpy()))


def test_range_rejects_fractional_integer_steps():
    with pytest.raises(ConstraintError, match="cannot step by 0.5"):
        I.Range(0, 0, delta=0.5, dtype=i32)


@pytest.mark.parametrize("shape, axis, bound, pick", [([3, 4], 1, 2, 0), ([5, 2, 3], 0, 7, 3), ([6], 0, 1, 1)])
def test_indices_in_range_and_distinct_by_construction(shape, axis, bound, pick):
    g = I.gather_indices(shape, bound, pick)
    assert g.shape == tuple(shape) and g.dtype == np.int64 and g.min() >= 0 and g.max() < bound
    if shape[axis] <= bound:
        d = np.moveaxis(I.distinct_indices(shape, axis, bound, pick), axis, -1).reshape(-1, shape[axis])
        assert d.min() >= 0 and d.max() < bound and all(len(set(line)) == len(line) for line in d.tolist())
    else:
        with pytest.raises(ValueError, match="distinct"):
            I.distinct_indices(shape, axis, bound, pick)


@pytest.mark.parametrize("lead, n", [([4], 4), ([3, 5], 7), ([2, 2, 3], 2), ([1], 1)])
def test_nd_positions_distinct_and_in_range(lead, n):
    for pick in I.PICKS:
        pos = I.nd_positions(lead, n, pick)
        assert pos.shape == (n, len(lead)) and len({tuple(p) for p in pos.tolist()}) == n
        assert (pos >= 0).all() and (pos < np.array(lead)).all()
    lens = I.sequence_lens(5, 3, 2)
    assert lens[0] == 3 and lens.min() >= 1 and lens.max() <= 3


@pytest.mark.parametrize("op, inputs", [
    (I.TopK(0, 0, largest=True), [([4], f32)]),
    (I.TopK(0, 5, largest=True), [([4], f32)]),
    (I.TopK(1, 1, largest=True), [([4], f32)]),
    (I.GatherElements(0, 0, pick=0), [([4], f32)]),
    (I.ScatterElements(0, reduction="none", pick=0), [([2, 3], f32), ([3, 3], f32)]),
    (I.ScatterElements(1, reduction="add", pick=0), [([2, 3], f32), ([3, 3], f32)]),
    (I.ScatterND(k=1, tail=1, reduction="none", pick=0), [([2, 3], f32), ([3, 3], f32)]),
    (I.ScatterND(k=1, tail=1, reduction="none", pick=0), [([2, 3], f32), ([2, 4], f32)]),
    (I.OneHot(2, 3, values=(0, 1), dtype=f32), [([4], i64)]),
    (I.Range(0, 65, delta=1, dtype=i64), [([4], f32)]),
    (I.Range(1, 0, delta=1, dtype=i64), [([4], f32)]),
])
def test_invalid_attributes_rejected(op, inputs):
    assert has_false(op, *inputs)


@pytest.mark.parametrize("cls, ranks, dtypes, kwargs", [
    (I.TopK, [3], [f32], {"largest": False}),
    (I.GatherElements, [2], [i32], {"pick": 2}),
    (I.ScatterElements, [3, 3], [f32, f32], {"reduction": "none", "pick": 1}),
    (I.ScatterND, [3, 2], [i64, i64], {"k": 2, "tail": 1, "reduction": "max", "pick": 0}),
    (I.OneHot, [2], [i64], {"values": (5, 2), "dtype": i64}),
    (I.Range, [3], [DType.bool], {"delta": -0.25, "dtype": f32}),
])
def test_solved(cls, ranks, dtypes, kwargs):
    for seed in range(2):
        op, xs = solve_concrete(cls, ranks, dtypes, kwargs=kwargs, seed=seed)
        assert check_direct(op, *[(x.shape, x.dtype) for x in xs], opsets=(18,)) == "ok"


def test_deduct_inputs():
    rng = random.Random(0)
    assert I.ScatterND(k=2, tail=1, reduction="none", pick=0).checked_deduct([AbsTensor([2, 3, 4], f32)], rng) == \
        [(3, f32), (2, f32)]
    rank, _ = I.OneHot(0, 3, values=(0, 1), dtype=f32).checked_deduct([AbsTensor([3, 2], f32)], rng)[0]
    assert rank == 1
    (rank, dt), = I.Range(0, 0, delta=1, dtype=i32).checked_deduct([AbsTensor([5], i32)], rng)
    assert rank >= 1 and dt in DTYPE_ALL
    assert I.ReverseSequence(batch_axis=0, pick=0).checked_deduct([AbsTensor([2, 3], f32)], rng) == [(2, f32)]
    with pytest.raises(ConstraintError, match="cannot make"):  # its indices would be 0-d
        I.OneHot(0, 3, values=(0, 1), dtype=f32).checked_deduct([AbsTensor([3], f32)], rng)


def test_value_ranges():
    from nnfuzz.abstract.ranges import VRange, propagate

    x = AbsTensor([2, 5], f32)
    vals, idx = propagate(I.TopK(1, 2, largest=True), [VRange(-3.0, 4.0)], [x], 2)
    assert (vals.lo, vals.hi, idx.lo, idx.hi) == (-3.0, 4.0, 0.0, 4.0)
    (r,) = propagate(I.Range(1, 2, delta=-3, dtype=i32), [VRange()], [x], 1)
    assert (r.lo, r.hi) == (-10.0, 2.0)
    (r,) = propagate(I.OneHot(0, 3, values=(5, 2), dtype=f32), [VRange()], [AbsTensor([2], i64)], 1)
    assert (r.lo, r.hi) == (2.0, 5.0)


def test_float_dtypes_of_mul():
    assert {r[0] for r in I.ScatterElements(0, reduction="mul", pick=0).in_dtypes} == set(DTYPE_FLOATS)


@pytest.mark.parametrize("op, inputs", [
    (I.TopK(1, 2, largest=True), [([3, 5], f32)]),
    (I.TopK(0, 3, largest=False), [([4, 2], i64)]),
    (I.GatherElements(1, 4, pick=1), [([2, 3], i32)]),
    (I.ScatterND(k=2, tail=0, reduction="mul", pick=1), [([4, 3], f32), ([2], f32)]),
    (I.OneHot(1, 4, values=(3, 7), dtype=f32), [([3, 2], i64)]),
    (I.Range(0, 2, delta=-3, dtype=i64), [([3], f32)]),
    (I.ReverseSequence(batch_axis=1, pick=0), [([4, 3, 2], f32)]),
])
def test_torch_exporter_writes_them(op, inputs):
    """export.via=torch: the TorchScript exporter writes these torch lowerings (TopK traced as torch.topk)."""
    assert check(op, *inputs) == "ort"


def test_scatter_elements_is_left_to_the_direct_path():
    from nnfuzz.materialize.onnx.export import torch_exports

    assert not torch_exports(I.ScatterElements) and torch_exports(I.ScatterND)
