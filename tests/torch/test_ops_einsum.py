"""Einsum end to end on the direct ONNX path (torch, numpy reference, ONNX checker and shape inference,
real ORT), its equation spellings, and its shape rules."""
import random

import numpy as np
import pytest
from direct_check import check_direct_on as check_direct
from oputil import check, has_false, solve_concrete

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.ops.einsum import spec as S
from nnfuzz.ops.einsum.onnx import implicit_output, spell
from nnfuzz.reference.registry import eval_op

f32, i32 = DType.float32, DType.int32
SHAPES = {
    "ij,jk->ik": [[2, 3], [3, 4]],
    "bij,bjk->bik": [[2, 3, 4], [2, 4, 5]],
    "ij->ji": [[2, 3]],
    "ij->i": [[4, 3]],
    "i,j->ij": [[3], [5]],
    "ij,ij->ij": [[2, 3], [2, 3]],
}


@pytest.mark.parametrize("equation", S.EQUATIONS)
@pytest.mark.parametrize("dt", [DType.float16, f32, DType.float64, i32, DType.int64], ids=str)
def test_every_equation_and_dtype(equation, dt):
    op = S.Einsum(equation=equation)
    assert check_direct(op, *[(s, dt) for s in SHAPES[equation]]) == "ok"


def test_bfloat16_is_written_at_opset_28():
    # ONNX Einsum takes bfloat16 from opset 28 (the model is written there); ORT's Python API cannot feed it
    assert check_direct(S.Einsum(equation="ij->ji"), ([2, 3], DType.bfloat16)) == "unsupported"


def test_integer_sums_stay_in_their_dtype():
    # torch would sum int32 into int64; an overflowing sum is undefined (ORT saturates it), so the
    # value search keeps sums in range: the compared case does not overflow
    x = np.array([[2 ** 30, 2 ** 29, -7]], np.int32)
    (got,) = eval_op(S.Einsum(equation="ij->i"), x)
    assert got.dtype == np.int32 and got.tolist() == [2 ** 30 + 2 ** 29 - 7]
    assert check_direct(S.Einsum(equation="ij->i"), ([1, 3], i32), arrays=[x]) == "ok"


@pytest.mark.parametrize("equation, letters, ellipsis, implicit, want", [
    ("ij,jk->ik", "as-is", False, True, "ij,jk"),
    ("ij->ji", "reversed", False, True, "rq"),
    ("ij->ji", "shifted", False, False, "pq->qp"),
    ("bij,bjk->bik", "as-is", True, False, "...ij,...jk->...ik"),
    ("ij->i", "as-is", True, False, "...j->..."),
])
def test_spellings(equation, letters, ellipsis, implicit, want):
    text = spell(equation, letters, ellipsis, implicit)
    assert text == want
    terms = want.split("->")[0].split(",")
    xs = [np.arange(np.prod(s), dtype=np.float64).reshape(s) for s in SHAPES[equation]]
    np.testing.assert_array_equal(np.einsum(text, *xs), np.einsum(equation, *xs))
    if implicit:
        assert implicit_output(terms) == S.parse(spell(equation, letters, False, False))[1]


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [[2, 3], [4, 5]]),
    ("bij,bjk->bik", [[2, 3, 4], [3, 4, 5]]),
    ("ij,ij->ij", [[2, 3], [2, 4]]),
])
def test_mismatched_letters_rejected(equation, shapes):
    assert has_false(S.Einsum(equation=equation), *[(s, f32) for s in shapes])


@pytest.mark.parametrize("equation", S.EQUATIONS)
def test_solved(equation):
    op = S.Einsum(equation=equation)
    ranks = [len(t) for t in op.terms]
    cop, xs = solve_concrete(S.Einsum, ranks, [f32] * len(ranks), kwargs={"equation": equation})
    assert cop.checked_type_transfer(xs)[0].ndims == len(op.out_term)
    assert check_direct(cop, *[(x.shape, x.dtype) for x in xs], opsets=(13,)) == "ok"


def test_deduct_inputs():
    rng = random.Random(0)
    assert S.Einsum(equation="ij->i").checked_deduct([AbsTensor([3], f32)], rng) == [(2, f32)]
    assert S.Einsum(equation="i,j->ij").checked_deduct([AbsTensor([3, 2], i32)], rng) == [(1, i32), (1, i32)]
    with pytest.raises(Exception, match="rank-1"):
        S.Einsum(equation="ij->ji").checked_deduct([AbsTensor([3], f32)], rng)


@pytest.mark.parametrize("equation", S.EQUATIONS)
def test_torch_exporter_writes_it(equation):
    """export.via=torch: the TorchScript exporter writes every equation shape."""
    dt = i32 if equation == "ij->i" else f32
    assert check(S.Einsum(equation=equation), *[(s, dt) for s in SHAPES[equation]]) == "ort"
