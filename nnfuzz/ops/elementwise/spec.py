"""Element-wise unary math and activations: the output has the input's shape and dtype.

Dtype rows list exactly the types that torch (CPU eager), the TorchScript ONNX exporter (opset 17)
and the ONNX checker all accept. Many ONNX activations (Elu, Selu, Softplus, HardSwish, ...) and the
trigonometric ops have no bfloat16 variant, hence ``_F_NO_BF16``.
"""
from nnfuzz.abstract.accuracy import Accuracy, EXACT, ROUNDED
from nnfuzz.abstract.domain import NONZERO, POSITIVE, Domain
from nnfuzz.abstract.dtype import DTYPE_FLOATS, DTYPE_NUMERIC, DTYPE_SIGNED_INTS, DType
from nnfuzz.abstract.kink import AT_ZERO, Kink
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.abstract.tensor import AbsTensor

_F_NO_BF16 = (DType.float16, DType.float32, DType.float64)


def _same(dtypes):
    return [(d,) for d in dtypes]


class UnaryOp(AbsOpBase, abstract=True):
    """y = f(x), y has x's shape and dtype. Rank 0 allowed."""
    accuracy = Accuracy(8)
    family = "elementwise"

    in_dtypes = _same(DTYPE_FLOATS)
    out_dtypes = _same(DTYPE_FLOATS)

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(x.shape, self.out_dtypes_for(inputs)[0])]


class UnaryNoBF16(UnaryOp, abstract=True):
    in_dtypes = _same(_F_NO_BF16)
    out_dtypes = _same(_F_NO_BF16)


# ---- activations --------------------------------------------------------------------------------

class Relu(UnaryOp):
    qdq = "compute"
    accuracy = EXACT
    kinks = {0: AT_ZERO}
    in_dtypes = _same(DTYPE_FLOATS + DTYPE_SIGNED_INTS)
    out_dtypes = _same(DTYPE_FLOATS + DTYPE_SIGNED_INTS)


class Relu6(UnaryOp):
    """min(max(x, 0), 6)."""
    accuracy = EXACT
    kinks = {0: Kink(points=(0.0, 6.0))}
    in_dtypes = _same(DTYPE_NUMERIC)
    out_dtypes = _same(DTYPE_NUMERIC)


class Gelu(UnaryOp):
    qdq = "compute"
    attr_choices = {"approximate": ("none", "tanh")}

    def __init__(self, *, approximate):
        self.approximate = approximate


class Sigmoid(UnaryOp):
    qdq = "compute"
    pass


class Tanh(UnaryOp):
    qdq = "compute"
    pass


class Softplus(UnaryNoBF16):
    qdq = "compute"
    pass


class Elu(UnaryNoBF16):
    attr_choices = {"alpha": (0.5, 1.0, 2.0)}

    def __init__(self, *, alpha):
        self.alpha = alpha


class Celu(UnaryOp):
    """ONNX Celu is float32-only. (float64 would export wrapped in Casts, i.e. computed in float32,
    which a float64 reference then flags as an inconsistency.)"""
    in_dtypes = _same((DType.float32,))
    out_dtypes = _same((DType.float32,))
    attr_choices = {"alpha": (0.5, 1.0, 2.0)}

    def __init__(self, *, alpha):
        self.alpha = alpha


class Selu(UnaryNoBF16):
    pass


class HardSwish(UnaryNoBF16):
    qdq = "compute"
    accuracy = Accuracy(3)
    kinks = {0: Kink(points=(-3.0, 3.0))}


class HardSigmoid(UnaryNoBF16):
    qdq = "compute"
    accuracy = Accuracy(2)
    kinks = {0: Kink(points=(-3.0, 3.0))}


class LeakyRelu(UnaryOp):
    """Slopes are exact in float32: ONNX stores float attributes as float32, so 0.1 would make a
    float64 model compute with 0.10000000149 on the ONNX side and 0.1 in torch."""
    qdq = "compute"
    accuracy = ROUNDED
    kinks = {0: AT_ZERO}
    attr_choices = {"negative_slope": (2.0 ** -7, 2.0 ** -3, 0.25, 0.5)}

    def __init__(self, *, negative_slope):
        self.negative_slope = negative_slope


class Mish(UnaryNoBF16):
    """x * tanh(softplus(x)); exported as Softplus/Tanh/Mul."""


class Silu(UnaryOp):
    """x * sigmoid(x)."""


class Softsign(UnaryOp):
    """x / (1 + |x|)."""
    accuracy = Accuracy(2)


class LogSigmoid(UnaryOp):
    """log(sigmoid(x))."""


class Tanhshrink(UnaryOp):
    """x - tanh(x)."""


class Hardshrink(UnaryOp):
    """x where |x| > lambd else 0."""
    accuracy = EXACT
    kinks = {0: Kink(attrs=("lambd",), mirrored=True)}
    attr_choices = {"lambd": (0.25, 0.5, 1.0)}

    def __init__(self, *, lambd):
        self.lambd = lambd


class Softshrink(UnaryOp):
    """x - lambd where x > lambd, x + lambd where x < -lambd, else 0."""
    accuracy = ROUNDED
    kinks = {0: Kink(attrs=("lambd",), mirrored=True)}
    attr_choices = {"lambd": (0.25, 0.5, 1.0)}

    def __init__(self, *, lambd):
        self.lambd = lambd


# ---- exponentials and logarithms -----------------------------------------------------------------

class Exp(UnaryOp):
    pass


class Log(UnaryOp):
    domains = {0: POSITIVE}


class Log2(UnaryOp):
    domains = {0: POSITIVE}


class Log1p(UnaryOp):
    """log(1 + x)."""
    domains = {0: Domain(lo=-1.0, lo_open=True, margin=10.0)}  # 1 + x loses digits near -1


class Sqrt(UnaryOp):
    accuracy = ROUNDED
    domains = {0: Domain(lo=0.0)}


class Rsqrt(UnaryOp):
    """1 / sqrt(x)."""
    accuracy = Accuracy(4)
    domains = {0: POSITIVE}


class Reciprocal(UnaryOp):
    """1 / x."""
    accuracy = ROUNDED
    domains = {0: NONZERO}


class Erf(UnaryOp):
    pass


class Square(UnaryOp):
    accuracy = ROUNDED
    in_dtypes = _same(DTYPE_NUMERIC)
    out_dtypes = _same(DTYPE_NUMERIC)


# ---- trigonometry --------------------------------------------------------------------------------

class Sin(UnaryNoBF16):
    pass


class Cos(UnaryNoBF16):
    pass


class Tan(UnaryNoBF16):
    pass


# Past +-1 the result is NaN, and a value computed on the bound (|x / std(x)| over two elements is 1) lands
# on either side by a rounding: open bounds keep inputs a margin inside
UNIT = Domain(lo=-1.0, hi=1.0, lo_open=True, hi_open=True)


class Asin(UnaryNoBF16):
    domains = {0: UNIT}


class Acos(UnaryNoBF16):
    domains = {0: UNIT}


class Atan(UnaryNoBF16):
    pass


# ---- sign, magnitude and rounding ----------------------------------------------------------------

class Abs(UnaryOp):
    accuracy = EXACT
    kinks = {0: AT_ZERO}
    in_dtypes = _same(DTYPE_NUMERIC)
    out_dtypes = _same(DTYPE_NUMERIC)


class Neg(UnaryOp):
    accuracy = EXACT
    in_dtypes = _same(DTYPE_FLOATS + DTYPE_SIGNED_INTS)
    out_dtypes = _same(DTYPE_FLOATS + DTYPE_SIGNED_INTS)


class Sign(UnaryOp):
    accuracy = EXACT
    kinks = {0: AT_ZERO}
    in_dtypes = _same(DTYPE_NUMERIC)
    out_dtypes = _same(DTYPE_NUMERIC)


class Floor(UnaryOp):
    accuracy = EXACT
    kinks = {0: Kink(period=1.0)}   # a jump at every integer


class Ceil(UnaryOp):
    accuracy = EXACT
    kinks = {0: Kink(period=1.0)}


class Round(UnaryNoBF16):
    """Round half to even."""
    accuracy = EXACT
    kinks = {0: Kink(period=1.0, offset=0.5)}   # a jump at every half-integer


# ---- float classification (output bool) ----------------------------------------------------------

class IsNan(UnaryOp):
    accuracy = EXACT
    in_dtypes = _same(DTYPE_FLOATS)
    out_dtypes = [(DType.bool,)] * len(DTYPE_FLOATS)


class IsInf(UnaryOp):
    accuracy = EXACT
    in_dtypes = _same(DTYPE_FLOATS)
    out_dtypes = [(DType.bool,)] * len(DTYPE_FLOATS)
