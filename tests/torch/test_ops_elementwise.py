import itertools

import pytest
from oputil import check_op as check, solve_concrete

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.abstract.tensor import AbsTensor

OPS = sorted(
    (c for c in vars(E).values() if isinstance(c, type) and issubclass(c, AbsOpBase) and not c._abstract),
    key=lambda c: c.__name__,
)




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
        check(op, [AbsTensor([2, 3], row[0])])
    # rank 0 catches the exporter casting 0-d float64 to float32 (see f64_scalar_safe)
    op = next(_instances(cls))
    check(op, [AbsTensor([], row[0])])


@pytest.mark.parametrize("cls", OPS, ids=[c.__name__ for c in OPS])
def test_rank5(cls):
    dt = DType.float32 if (DType.float32,) in cls.in_dtypes else cls.in_dtypes[0][0]
    check(next(_instances(cls)), [AbsTensor([1, 2, 1, 3, 1], dt)])


def test_bool_outputs_and_backward_deduction():
    out = E.IsNan().checked_type_transfer([AbsTensor([4], DType.float16)])
    assert out[0].dtype is DType.bool and out[0].shape == [4]
    assert E.Exp().checked_deduct([AbsTensor([2, 5], DType.float64)]) == [(2, DType.float64)]
    ded = E.IsInf().checked_deduct([AbsTensor([3], DType.bool)])
    assert ded[0][0] == 1 and ded[0][1].is_float


WITH_ATTRS = [c for c in OPS if c.attr_choices]


@pytest.mark.parametrize("cls", WITH_ATTRS, ids=[c.__name__ for c in WITH_ATTRS])
def test_solve_concrete_with_attrs(cls):
    kwargs = {k: v[-1] for k, v in cls.attr_choices.items()}
    op, xs = solve_concrete(cls, [3], [DType.float32], kwargs=kwargs)
    assert op.attrs == kwargs
    check(op, xs)
