import pytest
from oputil import check_op as check, solve_concrete

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.ops.tfonly import spec as T
from nnfuzz.abstract.tensor import AbsTensor

OPS = sorted(
    (c for c in vars(T).values() if isinstance(c, type) and issubclass(c, AbsOpBase) and not c._abstract),
    key=lambda c: c.__name__,
)
CASES = [(cls, row) for cls in OPS for row in cls.in_dtypes]


def test_ops_are_tf_dialect():
    assert [c.__name__ for c in OPS] == ["DivNoNan", "FloorMod", "SquaredDifference"]
    assert all(c.dialect == "tf" and c.family == "tfonly" for c in OPS)


@pytest.mark.parametrize("cls,row", CASES, ids=[f"{c.__name__}-{'-'.join(map(str, r))}" for c, r in CASES])
def test_every_dtype_row(cls, row):
    check(cls(), [AbsTensor([2, 1, 3], row[0]), AbsTensor([4, 1], row[1])])
    # all-0-d operands (the exporter would cast 0-d float64 to float32 without f64_scalar_safe)
    check(cls(), [AbsTensor([], d) for d in row])
    check(cls(), [AbsTensor([], row[0]), AbsTensor([3], row[1])])


@pytest.mark.parametrize("cls", OPS)
@pytest.mark.parametrize("ranks", [(3, 2), (1, 4), (0, 2)])
def test_solve_concrete(cls, ranks):
    op, xs = solve_concrete(cls, list(ranks), [DType.float32] * 2, seed=sum(ranks),
                            extra=lambda op, xs: [xs[0].shape[-1] == 1] if xs[0].ndims else [])
    check(op, xs)


def test_values():
    import torch

    from nnfuzz.materialize.torch.lowering import run_op

    x = torch.tensor([-7.0, 7.0, -7.0, 7.0, 5.0, 0.0])
    y = torch.tensor([3.0, 3.0, -3.0, -3.0, 0.0, 0.0])
    assert run_op(T.SquaredDifference(), x, y)[0].tolist() == [100.0, 16.0, 16.0, 100.0, 25.0, 0.0]
    assert run_op(T.FloorMod(), x[:4], y[:4])[0].tolist() == [2.0, 1.0, -1.0, -2.0]
    q = run_op(T.DivNoNan(), x, y)[0]
    assert q[4:].tolist() == [0.0, 0.0] and q[:4].tolist() == pytest.approx([-7 / 3, 7 / 3, 7 / 3, -7 / 3])


def test_div_no_nan_gradient_is_finite_where_y_is_zero():
    import torch

    from nnfuzz.materialize.torch.lowering import run_op

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([0.0, 4.0], requires_grad=True)
    run_op(T.DivNoNan(), x, y)[0].sum().backward()
    assert torch.isfinite(x.grad).all() and torch.isfinite(y.grad).all()
    assert x.grad.tolist() == [0.0, 0.25]
