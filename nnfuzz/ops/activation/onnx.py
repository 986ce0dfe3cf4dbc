"""ONNX lowerings of the activations with ONNX's parameters: each is its ONNX node; attributes equal to
their defaults are written or omitted (drawn), PRelu's slope may be reshaped to x's rank, and PRelu
may be written as its formula, Where(x > 0, x, x * slope)."""
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.activation import spec as A


def _attr(g, key: str, value: float, default: float):
    """``value`` as an attribute, or None (omitted) where it is the default and the draw says so."""
    if value == default and g.flip(key, "default", "explicit"):
        return None
    return float(value)


@onnx_lowers(A.PRelu)
def _prelu(op, g, x, slope):
    k, r = g.rank(slope), g.rank(x)
    if k < r and g.flip("slope", "reshaped", "as is"):  # the same values, aligned from the right
        full = (1,) * (r - k) + g.shape(slope)
        slope = g.op("Reshape", slope, g.shape_operand(full, slope, x), shape=full)
    if g.flip("prelu", "Where", "PRelu"):
        zero = g.like(0, x)
        return g.op("Where", g.op("Greater", x, zero), x, g.op("Mul", x, slope))
    return g.op("PRelu", x, slope)


@onnx_lowers(A.HardSigmoidAlphaBeta)
def _hard_sigmoid(op, g, x):
    return g.op("HardSigmoid", x, alpha=float(op.alpha), beta=_attr(g, "beta", op.beta, 0.5))


@onnx_lowers(A.ThresholdedRelu)
def _thresholded_relu(op, g, x):
    return g.op("ThresholdedRelu", x, alpha=_attr(g, "alpha", op.alpha, 1.0))


@onnx_lowers(A.Shrink)
def _shrink(op, g, x):
    return g.op("Shrink", x, lambd=_attr(g, "lambd", op.lambd, 0.5), bias=_attr(g, "bias", op.bias, 0.0))
