"""Activations with ONNX's parameters, which the elementwise family's torch-shaped ones lack.

PRelu:                x where x > 0, else x * slope; ``slope`` is a tensor unidirectionally
                      broadcastable to x (its right-aligned dims equal x's or 1: [C, 1, 1], [1], x's
                      shape, ...). The output has x's shape.
HardSigmoidAlphaBeta: ONNX HardSigmoid, max(0, min(1, alpha * x + beta)) (torch's hardsigmoid is
                      alpha = 1/6, beta = 0.5, the elementwise family's HardSigmoid).
ThresholdedRelu:      x where x > alpha, else 0.
Shrink:               x - bias where x > lambd, x + bias where x < -lambd, else 0.

Float attributes are exact in float32 (ONNX stores them as float32). Shrink's bias is a whole number,
so that its integer variants compute x +- bias exactly on every side (ONNX computes it in float and
converts back).
"""
from nnfuzz.abstract.accuracy import Accuracy, EXACT, ROUNDED
from nnfuzz.abstract import arith
from nnfuzz.abstract.dtype import DTYPE_FLOATS, DTYPE_INTS, DType
from nnfuzz.abstract.kink import AT_ZERO, Kink
from nnfuzz.abstract.op import RANK_ALL, AbsOpBase
from nnfuzz.abstract.tensor import AbsTensor

_NO_BF16 = (DType.float16, DType.float32, DType.float64)


def _same(dtypes):
    return [(d,) for d in dtypes]


class Activation(AbsOpBase, abstract=True):
    """y = f(x), y has x's shape and dtype."""
    accuracy = ROUNDED
    family = "activation"
    in_dtypes = _same(DTYPE_FLOATS)
    out_dtypes = _same(DTYPE_FLOATS)

    def type_transfer(self, inputs):
        return [AbsTensor(inputs[0].shape, inputs[0].dtype)]


class PRelu(Activation):
    """ONNX PRelu takes bfloat16 from opset 16, and int32/int64 (whose x * slope may overflow: the
    value search rejects that)."""
    kinks = {0: AT_ZERO}
    inp_ranks = [RANK_ALL, RANK_ALL]
    in_dtypes = [(d, d) for d in DTYPE_FLOATS + (DType.int32, DType.int64)]
    out_dtypes = _same(DTYPE_FLOATS + (DType.int32, DType.int64))

    def requires(self, inputs):
        x, slope = inputs
        if slope.ndims > x.ndims:
            return [False]
        return [arith.Or(s == 1, s == d) for s, d in zip(slope.shape[::-1], x.shape[::-1])]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        (out,) = outputs
        row = self._pick_in_row([out.dtype], rng)
        k = rng.randrange(out.ndims + 1) if rng is not None else out.ndims  # the slope's rank
        return [(out.ndims, row[0]), (k, row[1])]


class HardSigmoidAlphaBeta(Activation):
    """ONNX takes bfloat16 from opset 22."""
    accuracy = Accuracy(2)
    name = "HardSigmoidAlphaBeta"
    attr_choices = {"alpha": (0.125, 0.25, 0.5, 1.0), "beta": (0.0, 0.25, 0.5)}
    kinks = {0: Kink(attrs=("floor_at", "ceiling_at"))}  # where alpha * x + beta reaches 0 and 1

    def __init__(self, *, alpha, beta):
        self.alpha = alpha
        self.beta = beta

    @property
    def floor_at(self) -> float:
        return -self.beta / self.alpha

    @property
    def ceiling_at(self) -> float:
        return (1.0 - self.beta) / self.alpha


class ThresholdedRelu(Activation):
    """ONNX takes bfloat16 from opset 22."""
    accuracy = EXACT
    kinks = {0: Kink(attrs=("alpha",))}
    attr_choices = {"alpha": (0.0, 0.25, 1.0, 2.0)}

    def __init__(self, *, alpha):
        self.alpha = alpha


class Shrink(Activation):
    """ONNX takes every float dtype but bfloat16, and every integer one; integer results of x +- bias
    that overflow (uint8's 1 - 2) are rejected by the value search."""
    in_dtypes = _same(_NO_BF16 + DTYPE_INTS)
    out_dtypes = _same(_NO_BF16 + DTYPE_INTS)
    kinks = {0: Kink(attrs=("lambd",), mirrored=True)}
    attr_choices = {"lambd": (0.5, 1.0, 2.0), "bias": (0.0, 1.0, 2.0)}

    def __init__(self, *, lambd, bias):
        self.lambd = lambd
        self.bias = bias
