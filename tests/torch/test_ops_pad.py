import pytest

from oputil import check_op, solve_concrete

from nnfuzz.abstract.dtype import DType
from nnfuzz.ops.pad import spec as P
from nnfuzz.abstract.tensor import AbsTensor

f32 = DType.float32


def check(op, shape, dt):
    """check_op on one input."""
    return check_op(op, [(shape, dt)])


def has_false(op, shape):
    """requires holds a False predicate; type_transfer still runs (the generator calls it first)."""
    xs = [AbsTensor(shape, f32)]
    op.checked_type_transfer(xs)
    return False in op.checked_requires(xs)


SAMPLES = [
    (P.ConstantPad(1, 2, 0, 1, value=1.0), [2, 3, 4]),
    (P.ReflectPad(1, 2, 0, 1), [2, 3, 4]),
    (P.ReplicatePad(3, 0), [2, 3, 4]),
    (P.CircularPad(2, 1, 1, 0), [2, 2, 3, 3]),
]


@pytest.mark.parametrize("op, shape", SAMPLES, ids=lambda v: type(v).__name__ if not isinstance(v, list) else "")
def test_every_dtype(op, shape):
    for (dt,) in op.in_dtypes:
        check(op, shape, dt)


def test_bool_only_where_torch_pads_it():
    assert (DType.bool,) in P.ConstantPad.in_dtypes and (DType.bool,) in P.CircularPad.in_dtypes
    assert (DType.bool,) not in P.ReflectPad.in_dtypes and (DType.bool,) not in P.ReplicatePad.in_dtypes


@pytest.mark.parametrize("op, shape", [
    (P.ConstantPad(1, 1, value=1.0), [3]),
    (P.ConstantPad(-1, 2, 0, -2, value=0.0), [2, 3, 4]),
    (P.ConstantPad(-2, 3, value=0.0), [2]),  # cropped to empty, then padded
    (P.ConstantPad(1, 0, 0, 1, 1, 1, 0, 0, 2, 1, value=1.0), [1, 2, 1, 2, 1]),
    (P.ReflectPad(2, 2), [3, 3]),
    (P.ReflectPad(0, 1, 2, 0, 1, 1), [1, 2, 2, 3, 2]),
    (P.ReplicatePad(5, 1, 0, 2), [1, 1, 1]),
    (P.ReplicatePad(1, 1, 1, 1, 1, 1), [2, 1, 2, 1]),
    (P.CircularPad(3, 0), [1, 2, 3]),
    (P.CircularPad(1, 1, 2, 2, 0, 1), [1, 1, 2, 2, 2]),
])
def test_attribute_values(op, shape):
    for dt in (f32, DType.int64):
        check(op, shape, dt)


@pytest.mark.parametrize("cls, rank, n_var, kwargs", [
    (P.ConstantPad, 3, 4, {"value": 0.0}),
    (P.ConstantPad, 1, 2, {"value": 1.0}),
    (P.ConstantPad, 5, 10, {"value": 0.0}),
    (P.ReflectPad, 3, 2, {}),
    (P.ReflectPad, 5, 6, {}),
    (P.ReplicatePad, 4, 4, {}),
    (P.CircularPad, 3, 2, {}),
    (P.CircularPad, 4, 4, {}),
])
def test_solved(cls, rank, n_var, kwargs):
    for seed in range(2):
        op, (x,) = solve_concrete(cls, [rank], [f32], n_var=n_var, kwargs=kwargs, seed=seed)
        check(op, x.shape, x.dtype)


def test_solved_negative_constant_pad_keeps_dims_positive():
    op, (x,) = solve_concrete(P.ConstantPad, [2], [f32], n_var=4, kwargs={"value": 0.0},
                              extra=lambda op, xs: [p < 0 for p in op.pads])
    assert all(d >= 1 for d in op.checked_type_transfer([x])[0].shape)
    check(op, x.shape, x.dtype)


def test_ranks_follow_padded_axes():
    assert P.ConstantPad(1, 1, 1, 1, value=0.0).inp_ranks == [(2, 3, 4, 5)]
    assert P.ReflectPad(1, 1, 1, 1).inp_ranks == [(3, 4)]
    assert P.ReplicatePad(1, 1, 1, 1, 1, 1).inp_ranks == [(4, 5)]
    assert P.CircularPad(1, 1).inp_ranks == [(3,)]


@pytest.mark.parametrize("op, shape", [
    (P.ConstantPad(-2, -1, value=0.0), [3]),
    (P.ConstantPad(0, 0, -3, 0, value=0.0), [3, 2]),
    (P.ConstantPad(-3, 2, value=0.0), [2]),  # torch crops first: narrow() to a negative length
    (P.ReflectPad(3, 0), [2, 3]),
    (P.ReflectPad(0, -1), [2, 3]),
    (P.ReplicatePad(-1, 0), [2, 3]),
    (P.CircularPad(4, 0), [1, 2, 3]),
    (P.CircularPad(-1, 0), [1, 2, 3]),
])
def test_invalid_attributes_rejected(op, shape):
    assert has_false(op, shape)


@pytest.mark.parametrize("pad", [P.ConstantPad(1, -1, 0, 2, value=1.0), P.ReflectPad(1, 0, 0, 1), P.ReplicatePad(2, 1, 0, 0)])
def test_export_is_static_so_a_later_squeeze_stays_a_squeeze(pad):
    """The stock exporter computes pads at run time; it then loses the padded shape and exports a
    following squeeze as an If node of unknown rank. The static pad export keeps every dim."""
    import onnx
    import torch

    from nnfuzz.ops.layout.spec import Squeeze
    from nnfuzz.materialize.onnx.export import check_onnx, export_onnx
    from nnfuzz.materialize.torch.lowering import run_op

    x = AbsTensor([2, 1, 3, 3], f32)
    (y,) = pad.checked_type_transfer([x])
    sq = Squeeze(1)
    (z,) = sq.checked_type_transfer([y])

    class Two(torch.nn.Module):
        def forward(self, t):
            return run_op(sq, *run_op(pad, t))[0]

    model = export_onnx(Two(), [torch.randn(2, 1, 3, 3)], ["i0"], ["o0"])
    assert [n.op_type for n in model.graph.node if n.op_type not in ("Constant",)] == ["Pad", "Squeeze"]
    inferred = check_onnx(model, [z], ["o0"])
    dims = [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim]
    assert dims == z.shape
    assert onnx.shape_inference.infer_shapes(model, strict_mode=True)
