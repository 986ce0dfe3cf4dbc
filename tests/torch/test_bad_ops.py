"""Bad operator definitions get errors that name the op and what disagreed."""
import pytest

from nnfuzz.abstract import OP_REGISTRY, AbsOpBase, AbsTensor, DType
from nnfuzz.abstract.arith import fdiv
from nnfuzz.errors import OpDefinitionError
from nnfuzz.generate import GenPolicy
from nnfuzz.generate.opset import check_satisfiable
from nnfuzz.generate.symbolic import GraphGenerator
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.torch.lowering import LOWERINGS, lowers

F32 = DType.float32


@pytest.fixture
def liar():
    class HalfLast(AbsOpBase):
        """Claims to halve the last dim; its lowering does not."""
        name = "TestHalfLast"
        in_dtypes = [(F32,)]
        out_dtypes = [(F32,)]
        inp_ranks = [(1, 2, 3)]
        out_ranks = [(1, 2, 3)]

        def requires(self, inputs):
            return [inputs[0].shape[-1] % 2 == 0]

        def type_transfer(self, inputs):
            x = inputs[0]
            return [AbsTensor(x.shape[:-1] + [fdiv(x.shape[-1], 2)], F32)]

    @lowers(HalfLast)
    def _identity(op, x):
        return x * 1

    yield HalfLast
    OP_REGISTRY.pop("TestHalfLast", None)
    LOWERINGS.pop(HalfLast, None)


def test_lowering_that_contradicts_type_transfer_is_named(liar):
    gir = GraphGenerator(GenPolicy(max_nodes=2, dtypes=["float32"], max_attempts=200), [liar]).generate()
    with pytest.raises(OpDefinitionError, match=r"TestHalfLast.*type_transfer says output 0 is f32\[.*torch lowering produced"):
        build_model(gir, 0, export=False)


def test_symbolic_misuse_gets_a_hint():
    class FloorHalf(AbsOpBase):
        name = "TestFloorHalf"
        in_dtypes = [(F32,)]
        out_dtypes = [(F32,)]

        def type_transfer(self, inputs):
            return [AbsTensor([max(d, 2) for d in inputs[0].shape], F32)]  # max() on a z3 term

    try:
        with pytest.raises(OpDefinitionError, match="TestFloorHalf.*use nnfuzz.abstract.arith .smax/smin for max/min"):
            check_satisfiable(FloorHalf, GenPolicy())  # what select_ops runs on every user op
    finally:
        OP_REGISTRY.pop("TestFloorHalf", None)


def test_lowering_that_raises_is_named(liar):
    @lowers(liar)
    def _boom(op, x):
        raise RuntimeError("kaboom")

    gir = GraphGenerator(GenPolicy(max_nodes=1, dtypes=["float32"], max_attempts=200), [liar]).generate()
    with pytest.raises(OpDefinitionError, match="torch lowering of TestHalfLast.*kaboom"):
        build_model(gir, 0, export=False)
