"""Integer ops with ONNX semantics: bitwise logic, shifts, and integer division, modulo and power.

All broadcast as the binary family does (numpy rules) and compute in their inputs' dtype. What C
leaves undefined is kept out of every test by the ops' domains (and the value search's overflow
check): a shift by a negative amount or by the dtype's width or more, a zero divisor, an int
minimum divided by -1 (the quotient overflows, and x86 traps on it), an overflowing power.
"""
from nnfuzz.abstract.accuracy import EXACT
from nnfuzz.abstract.domain import NONZERO, Domain
from nnfuzz.abstract.dtype import DTYPE_INTS, DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.ops.binary.spec import BinaryOp


def _pairs(dtypes):
    return [(d, d) for d in dtypes], [(d,) for d in dtypes]


class IntBinaryOp(BinaryOp, abstract=True):
    """z = f(x, y) on two integer tensors of one dtype, with broadcasting."""
    accuracy = EXACT
    family = "bitwise"
    in_dtypes, out_dtypes = _pairs(DTYPE_INTS)


# ---- bitwise logic (ONNX opset 18) ---------------------------------------------------------------

class BitwiseAnd(IntBinaryOp):
    pass


class BitwiseOr(IntBinaryOp):
    pass


class BitwiseXor(IntBinaryOp):
    pass


class BitwiseNot(AbsOpBase):
    """~x: every bit flipped (-x - 1 for signed ints, 255 - x for uint8)."""
    accuracy = EXACT
    family = "bitwise"
    in_dtypes = [(d,) for d in DTYPE_INTS]
    out_dtypes = [(d,) for d in DTYPE_INTS]

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(x.shape, x.dtype)]


class BitShift(IntBinaryOp):
    """x shifted by y bits towards ``direction``. Bits shifted out are dropped (a left shift wraps
    modulo 2^bits); a right shift of a signed int is arithmetic. ONNX takes unsigned ints from
    opset 11 and signed ints from opset 28. The amount lies in 0..7, in range for every dtype: a
    negative one, or one of the dtype's width or more, was left undefined by ONNX before opset 28."""
    attr_choices = {"direction": ("LEFT", "RIGHT")}
    domains = {1: Domain(lo=0.0, hi=7.0)}

    def __init__(self, *, direction):
        self.direction = direction


# ---- integer arithmetic --------------------------------------------------------------------------

class Mod(IntBinaryOp):
    """ONNX Mod with fmod=0 on integers: x - floor(x / y) * y, which has y's sign (Python's %)."""
    domains = {1: NONZERO}


class IntDiv(IntBinaryOp):
    """ONNX Div on integers: the quotient truncated towards zero (C's /). ONNX takes int8, int16 and
    uint8 from opset 14."""
    domains = {1: NONZERO}


class IntPow(BinaryOp):
    """ONNX Pow on an integer base (int32/int64) and an integer exponent of any integer dtype; the
    result has the base's dtype. Exponents lie in 0..3 (a negative one has no integer result), and
    the value search rejects results that overflow."""
    accuracy = EXACT
    family = "bitwise"
    in_dtypes = [(b, e) for b in (DType.int32, DType.int64) for e in DTYPE_INTS]
    out_dtypes = [(b,) for b in (DType.int32, DType.int64) for _ in DTYPE_INTS]
    domains = {1: Domain(lo=0.0, hi=3.0)}
