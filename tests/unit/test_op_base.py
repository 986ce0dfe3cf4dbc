import pytest
import z3

from nnfuzz.abstract import OP_REGISTRY, AbsOpBase, AbsTensor, DType, load_builtin_ops
from nnfuzz.abstract.op import op_from_json, ranks
from nnfuzz.errors import InternalError, OpDefinitionError

F32 = DType.float32


@pytest.fixture(scope="module")
def _Window():
    """A test-only op, registered for this module's tests only: registered at import, it sat in the op
    registry of every test an xdist worker ran after collecting this module, and a generation test drew it
    (it has no lowering)."""
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

    yield _Window
    del OP_REGISTRY["TestWindow"]


def test_subclass_registers_and_reads_signature(_Window):
    assert OP_REGISTRY["TestWindow"] is _Window
    assert _Window._sym_params == ("k", "s") and _Window._kw_params == ("flag",)
    assert _Window.family == "test_op_base"


def test_checked_type_transfer_symbolic_and_concrete(_Window):
    k = z3.Int("k")
    op = _Window(k, 2, flag=True)
    (out,) = op.checked_type_transfer([AbsTensor([3, 10], F32)])
    assert out.ndims == 2 and z3.is_expr(out.shape[1])
    cop = _Window(3, 2, flag=True)
    assert cop.checked_type_transfer([AbsTensor([3, 10], F32)])[0].shape == [3, 4]
    assert cop.checked_requires([AbsTensor([3, 2], F32)]) == [False]


def test_checked_wrappers_name_the_op(_Window):
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


def test_unary_and_binary_bases_from_both_import_paths():
    import nnfuzz.abstract as a
    import nnfuzz.abstract.op as o

    assert a.UnaryOpBase is o.UnaryOpBase and a.BinaryOpBase is o.BinaryOpBase
    assert issubclass(o.UnaryOpBase, AbsOpBase) and issubclass(o.BinaryOpBase, AbsOpBase)
    with pytest.raises(OpDefinitionError, match="abstract"):
        o.UnaryOpBase()

    class TestAddish(o.BinaryOpBase):
        inp_dtypes = [(F32, F32)]
        out_dtypes = [(F32,)]

        def type_infer(self, inputs):
            return [inputs[0]]

    try:
        op = TestAddish()
        assert (op.n_inputs, op.n_outputs) == (2, 1)
        assert TestAddish.in_dtypes == TestAddish.inp_dtypes == [(F32, F32)]
        x = AbsTensor([2, 3], F32)
        assert op.checked_type_transfer([x, x]) == [x] and op.type_transfer([x, x]) == [x]
    finally:
        del OP_REGISTRY["TestAddish"]


def test_documented_spellings_as_the_docs_write_them():
    """super().__init__(), inp_ranks set in __init__, inp_dtypes, type_infer and // on symbolic ints."""
    from nnfuzz.abstract import UnaryOpBase

    class TestDocPool(UnaryOpBase):
        inp_dtypes = [(F32,)]
        out_dtypes = [(F32,)]

        def __init__(self, k, stride):
            super().__init__()
            self.k, self.stride = k, stride
            self.inp_ranks = [(4,)]
            self.out_ranks = [(4,)]

        def type_infer(self, itensors):
            n, c, h, w = itensors[0].shape
            return [AbsTensor([n, c, (h - self.k) // self.stride, w % self.stride + 1], itensors[0].dtype)]

    try:
        k, s = z3.Int("k"), z3.Int("s")
        sym = TestDocPool(k, s).checked_type_transfer([AbsTensor([1, 2, z3.Int("h"), 9], F32)])[0]
        assert str(sym.shape[2]) == "(h - k)/s"
        op = TestDocPool(3, 2)
        assert op.n_inputs == 1 and op.inp_ranks == [(4,)]
        assert op.checked_type_transfer([AbsTensor([1, 2, 10, 9], F32)])[0].shape == [1, 2, 3, 2]
        with pytest.raises(InternalError, match="rank 3"):
            op.checked_type_transfer([AbsTensor([2, 10, 9], F32)])
    finally:
        del OP_REGISTRY["TestDocPool"]


def test_instance_inp_dtypes_sets_in_dtypes():
    class TestInstDt(AbsOpBase):
        in_dtypes = [(F32,), (DType.float64,)]
        out_dtypes = [(F32,), (DType.float64,)]

        def __init__(self):
            self.inp_dtypes = [(F32,)]
            self.out_dtypes = [(F32,)]

    try:
        assert TestInstDt().in_dtypes == [(F32,)]
    finally:
        del OP_REGISTRY["TestInstDt"]


@pytest.mark.parametrize("body", [
    {"in_dtypes": [(F32,)], "inp_dtypes": [(DType.float64,)], "out_dtypes": [(F32,)]},
    {"in_dtypes": [(F32,)], "out_dtypes": [(F32,)], "type_infer": lambda self, i: i, "type_transfer": lambda self, i: i},
])
def test_both_spellings_with_different_values_are_refused(body):
    with pytest.raises(OpDefinitionError, match=r"TestTwice defines both (inp_dtypes and in_dtypes|type_infer and "
                                                r"type_transfer) with different values"):
        type("TestTwice", (AbsOpBase,), dict(body))
    OP_REGISTRY.pop("TestTwice", None)


def test_a_retry_signal_from_the_rules_is_not_wrapped_as_an_error():
    from nnfuzz.errors import ConstraintError, ControlSignal, NNFuzzError

    assert issubclass(ConstraintError, ControlSignal) and not issubclass(ConstraintError, NNFuzzError)

    class TestRefuses(AbsOpBase):
        in_dtypes = [(F32,)]
        out_dtypes = [(F32,)]

        def type_transfer(self, inputs):
            raise ConstraintError("not with these inputs")

    try:
        with pytest.raises(ConstraintError, match="not with these inputs"):
            TestRefuses().checked_type_transfer([AbsTensor([2], F32)])
    finally:
        del OP_REGISTRY["TestRefuses"]


def test_a_divisor_that_may_be_negative_is_named_as_the_op_definitions_fault():
    """z3's % and Python's differ for negative divisors: the generator says so instead of crashing."""
    from nnfuzz.abstract import UnaryOpBase
    from nnfuzz.generate.policy import GenPolicy
    from nnfuzz.generate.symbolic import GraphGenerator

    class TestNegDiv(UnaryOpBase):
        inp_dtypes = [(F32,)]
        out_dtypes = [(F32,)]
        inp_ranks = [(1,)]
        out_ranks = [(1,)]
        attr_kinds = {"d": "any"}

        def __init__(self, d):
            self.d = d

        def requires(self, inputs):
            return [self.d <= -2, self.d >= -3]

        def type_infer(self, inputs):
            return [AbsTensor([inputs[0].shape[0] % self.d + 1], inputs[0].dtype)]

    try:
        with pytest.raises(OpDefinitionError, match=r"TestNegDiv: Z3 found attributes \{'d': -\d\}.*divisor that "
                                                     r"requires keeps >= 1"):
            GraphGenerator(GenPolicy(seed=0, dtypes=["float32"], max_nodes=3, binning=False), [TestNegDiv]).generate()
    finally:
        del OP_REGISTRY["TestNegDiv"]
