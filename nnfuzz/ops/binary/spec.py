"""Broadcasting binary ops (arithmetic, comparison, logic) and logical Not.

Broadcasting follows numpy: shapes are aligned from the right; in each aligned pair the dims are
equal or one of them is 1, and the output takes the other one. Missing leading dims count as 1.
Both inputs share one dtype; ranks may differ.
"""
from nnfuzz.abstract.accuracy import Accuracy, EXACT, ROUNDED
from nnfuzz.abstract import arith
from nnfuzz.abstract.dtype import DTYPE_ALL, DTYPE_FLOATS, DTYPE_NUMERIC, DType
from nnfuzz.abstract.op import RANK_ALL, AbsOpBase
from nnfuzz.abstract.domain import NONZERO, POSITIVE
from nnfuzz.abstract.kink import Kink
from nnfuzz.abstract.tensor import AbsTensor


def broadcast_requires(*shapes):
    """Each pair of right-aligned dims is equal or one of them is 1."""
    preds = []
    n = max(len(s) for s in shapes)
    for i in range(1, n + 1):
        dims = [s[-i] for s in shapes if len(s) >= i]
        for j, a in enumerate(dims):
            for b in dims[j + 1:]:
                preds.append(arith.Or(a == b, a == 1, b == 1))
    return preds


def broadcast_shape(*shapes):
    """The broadcast output shape (assuming broadcast_requires holds)."""
    n = max(len(s) for s in shapes)
    out = []
    for i in range(n, 0, -1):
        dims = [s[-i] for s in shapes if len(s) >= i]
        d = dims[0]
        for e in dims[1:]:
            d = arith.If(d == 1, e, d)
        out.append(d)
    return out


def _rows(dtypes, out=None):
    """(in_dtypes, out_dtypes) for ops whose two inputs share a dtype from ``dtypes``."""
    return [(d, d) for d in dtypes], [(out or d,) for d in dtypes]


class BinaryOp(AbsOpBase, abstract=True):
    """z = f(x, y) with broadcasting; z's dtype comes from the row."""
    accuracy = ROUNDED
    family = "binary"

    inp_ranks = [RANK_ALL, RANK_ALL]
    out_ranks = [RANK_ALL]
    in_dtypes, out_dtypes = _rows(DTYPE_NUMERIC)

    def requires(self, inputs):
        return broadcast_requires(*(x.shape for x in inputs))

    def type_transfer(self, inputs):
        return [AbsTensor(broadcast_shape(*(x.shape for x in inputs)), self.out_dtypes_for(inputs)[0])]


# ---- arithmetic ----------------------------------------------------------------------------------

class Add(BinaryOp):
    qdq = "compute"
    pass


class Sub(BinaryOp):
    pass


class Mul(BinaryOp):
    qdq = "compute"
    pass


class Div(BinaryOp):
    """True division. Floats only: integer division by zero raises in torch eager (and traps in
    ORT), and random integer inputs hit zero often."""
    domains = {1: NONZERO}
    in_dtypes, out_dtypes = _rows(DTYPE_FLOATS)
    accuracy = Accuracy(2)  # not always correctly rounded: OpenVINO's float32 Div measured 0.9 ulps (docs/accuracy.md)


class Pow(BinaryOp):
    """x ** y, floats only: integer powers with negative exponents (and their overflow) are defined
    differently by torch and ONNX runtimes, so they would only produce false alarms.
    """
    accuracy = Accuracy(8)
    domains = {0: POSITIVE}  # a negative base with a fractional exponent is NaN, 0 ** negative inf
    in_dtypes, out_dtypes = _rows(DTYPE_FLOATS)


class Fmod(BinaryOp):
    """C fmod (sign of x). Floats only for the same reason as Div."""
    accuracy = Accuracy(300)  # a kernel computing x - trunc(x / y) * y loses the digits of x below the result
    domains = {1: NONZERO}
    kinks = {0: Kink(ratio_with=1)}  # its value jumps where x / y is an integer; d/dy = -trunc(x / y)
    in_dtypes, out_dtypes = _rows(DTYPE_FLOATS)


class Max(BinaryOp):
    """Element-wise maximum."""
    accuracy = EXACT
    kinks = {0: Kink(ties_with=1)}


class Min(BinaryOp):
    """Element-wise minimum."""
    accuracy = EXACT
    kinks = {0: Kink(ties_with=1)}


# ---- comparison (output bool) --------------------------------------------------------------------

class Equal(BinaryOp):
    accuracy = EXACT
    in_dtypes, out_dtypes = _rows(DTYPE_ALL, DType.bool)


class Greater(BinaryOp):
    accuracy = EXACT
    in_dtypes, out_dtypes = _rows(DTYPE_NUMERIC, DType.bool)


class Less(BinaryOp):
    accuracy = EXACT
    in_dtypes, out_dtypes = _rows(DTYPE_NUMERIC, DType.bool)


class GreaterEqual(BinaryOp):
    accuracy = EXACT
    in_dtypes, out_dtypes = _rows(DTYPE_NUMERIC, DType.bool)


class LessEqual(BinaryOp):
    accuracy = EXACT
    in_dtypes, out_dtypes = _rows(DTYPE_NUMERIC, DType.bool)


# ---- logic (bool) --------------------------------------------------------------------------------

class And(BinaryOp):
    accuracy = EXACT
    in_dtypes, out_dtypes = _rows((DType.bool,))


class Or(BinaryOp):
    accuracy = EXACT
    in_dtypes, out_dtypes = _rows((DType.bool,))


class Xor(BinaryOp):
    accuracy = EXACT
    in_dtypes, out_dtypes = _rows((DType.bool,))


class Not(AbsOpBase):
    """Logical negation of a bool tensor (unary)."""
    accuracy = EXACT
    family = "binary"

    in_dtypes = [(DType.bool,)]
    out_dtypes = [(DType.bool,)]

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(x.shape, DType.bool)]
