import pytest
import z3

from nnfuzz.abstract import OP_REGISTRY, AbsOpBase, AbsTensor, DType, load_builtin_ops
from nnfuzz.abstract.op import op_from_json, ranks
from nnfuzz.errors import InternalError, OpDefinitionError

F32 = DType.float32


class _Window(AbsOpBase):
    """A test-only op: a 1-D window of size k with stride s over the last dim."""

    name = "TestWindow"
    in_dtypes = [(F32,)]
    out_dtypes = [(F32,)]
    inp_ranks = [ranks(1)]
    out_ranks = [ranks(1)]
    attr_choices = {"flag": (False, True)}

    def __init__(self, k, s, *, flag):
        self.k, self.s, self.flag = k, s, flag

    def requires(self, inputs):
        (x,) = inputs
        return [self.k >= 1, self.s >= 1, x.shape[-1] >= self.k]

    def type_transfer(self, inputs):
        (x,) = inputs
        from nnfuzz.abstract.arith import fdiv

        return [AbsTensor(x.shape[:-1] + [fdiv(x.shape[-1] - self.k, self.s) + 1], F32)]


def test_subclass_registers_and_reads_signature():
    assert OP_REGISTRY["TestWindow"] is _Window
    assert _Window._sym_params == ("k", "s") and _Window._kw_params == ("flag",)
    assert _Window.family == "test_op_base"


def test_checked_type_transfer_symbolic_and_concrete():
    k = z3.Int("k")
    op = _Window(k, 2, flag=True)
    (out,) = op.checked_type_transfer([AbsTensor([3, 10], F32)])
    assert out.ndims == 2 and z3.is_expr(out.shape[1])
    cop = _Window(3, 2, flag=True)
    assert cop.checked_type_transfer([AbsTensor([3, 10], F32)])[0].shape == [3, 4]
    assert cop.checked_requires([AbsTensor([3, 2], F32)]) == [False]


def test_checked_wrappers_name_the_op():
    op = _Window(3, 2, flag=False)
    with pytest.raises(InternalError, match="TestWindow.*rank 0"):
        op.checked_type_transfer([AbsTensor([], F32)])
    with pytest.raises(InternalError, match="TestWindow.*dtypes"):
        op.checked_type_transfer([AbsTensor([4], DType.int32)])


def test_type_transfer_that_breaks_its_tables_is_reported():
    class _Liar(AbsOpBase):
        name = "TestLiar"
        in_dtypes = [(F32,)]
        out_dtypes = [(F32,)]

        def type_transfer(self, inputs):
            return [AbsTensor(inputs[0].shape, DType.int64)]

    with pytest.raises(OpDefinitionError, match="TestLiar.*int64"):
        _Liar().checked_type_transfer([AbsTensor([2], F32)])
    del OP_REGISTRY["TestLiar"]


@pytest.mark.parametrize("body, match", [
    ({"in_dtypes": [(F32,)], "out_dtypes": []}, "non-empty"),
    ({"in_dtypes": [(F32,), (DType.int32,)], "out_dtypes": [(F32,)]}, "rows"),
    ({"in_dtypes": [("float32",)], "out_dtypes": [("float32",)]}, "tuple of DType"),
    ({"in_dtypes": [(F32,)], "out_dtypes": [(F32,)], "num_var_param": [1]}, "num_var_param"),
    ({"in_dtypes": [(F32,)], "out_dtypes": [(F32,)], "attr_kinds": {"k": "huge"}}, "valid kinds"),
])
def test_malformed_op_classes_fail_at_definition(body, match):
    with pytest.raises(OpDefinitionError, match=match):
        type("TestBad", (AbsOpBase,), dict(body))
    OP_REGISTRY.pop("TestBad", None)


def test_name_collision_is_refused():
    load_builtin_ops()
    with pytest.raises(OpDefinitionError, match="already taken"):
        type("Relu", (AbsOpBase,), {"in_dtypes": [(F32,)], "out_dtypes": [(F32,)]})


def test_json_round_trip_of_every_builtin_skeleton():
    for cls in list(load_builtin_ops().values()):
        kw = {k: cls.attr_choices[k][0] for k in cls._kw_params}
        n_var = cls.num_var_param[0] if cls.num_var_param else 0
        op = cls(*([1] * len(cls.sym_param_names(n_var))), **kw)
        again = op_from_json(op.to_json())
        assert type(again) is cls and again.attrs == op.attrs or again.to_json() == op.to_json()
