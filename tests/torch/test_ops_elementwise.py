import itertools

import pytest
from oputil import check_op

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.abstract.ops import elementwise as E
from nnfuzz.abstract.tensor import AbsTensor

OPS = sorted(
    (c for c in vars(E).values() if isinstance(c, type) and issubclass(c, AbsOpBase) and not c._abstract),
    key=lambda c: c.__name__,
)


def check(op, inputs):
    # ORT's Python API cannot take bfloat16 numpy arrays as feeds, so bf16 cases stop after the
    # ONNX checker (export + full_check + strict shape inference still run).
    run_ort = not any(t.dtype is DType.bfloat16 for t in inputs)
    return check_op(op, inputs, run_ort=run_ort)


def _instances(cls):
    keys = list(cls.attr_choices)
    for combo in itertools.product(*(cls.attr_choices[k] for k in keys)):
        yield cls(**dict(zip(keys, combo)))


CASES = [(cls, row) for cls in OPS for row in cls.in_dtypes]


def test_at_least_28_unary_ops():
    assert len(OPS) >= 28
    for name in ("Relu", "Sigmoid", "Log", "LeakyRelu", "Gelu", "Asin", "Reciprocal", "Erf", "Sign"):
        assert hasattr(E, name)


@pytest.mark.parametrize("cls,row", CASES, ids=[f"{c.__name__}-{r[0]}" for c, r in CASES])
def test_every_dtype_row(cls, row):
    for op in _instances(cls):
        assert check(op, [AbsTensor([2, 3], row[0])]) in ("ok", "unsupported")


@pytest.mark.parametrize("cls", OPS, ids=[c.__name__ for c in OPS])
def test_rank0_and_rank4(cls):
    op = next(_instances(cls))
    dt = DType.float32 if (DType.float32,) in cls.in_dtypes else cls.in_dtypes[0][0]
    assert check(op, [AbsTensor([], dt)]) in ("ok", "unsupported")
    assert check(op, [AbsTensor([1, 2, 1, 3], dt)]) in ("ok", "unsupported")


def test_bool_outputs_and_backward_deduction():
    out = E.IsNan().checked_type_transfer([AbsTensor([4], DType.float16)])
    assert out[0].dtype is DType.bool and out[0].shape == [4]
    assert E.Exp().checked_deduct([AbsTensor([2, 5], DType.float64)]) == [(2, DType.float64)]
    ded = E.IsInf().checked_deduct([AbsTensor([3], DType.bool)])
    assert ded[0][0] == 1 and ded[0][1].is_float
