"""Relax lowerings of the activations with ONNX's parameters, each its torch formula."""
import math

from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_lowers
from nnfuzz.ops.activation import spec as A


@relax_lowers(A.PRelu)
def _prelu(op, g, x, slope):
    return R.where(R.greater(x, g.scalar(0, x)), x, R.multiply(x, slope))


@relax_lowers(A.HardSigmoidAlphaBeta)
def _hard_sigmoid(op, g, x):
    y = R.add(R.multiply(x, g.scalar(op.alpha, x)), g.scalar(op.beta, x))
    return R.minimum(R.maximum(y, g.scalar(0, x)), g.scalar(1, x))


@relax_lowers(A.ThresholdedRelu)
def _thresholded_relu(op, g, x):
    return R.where(R.greater(x, g.scalar(op.alpha, x)), x, g.scalar(0, x))


@relax_lowers(A.Shrink)
def _shrink(op, g, x):
    # integer x: x > lambd is x > floor(lambd), x < -lambd is x < ceil(-lambd) (torch compares in float)
    hi, lo = (op.lambd, -op.lambd) if g.dtype(x).startswith("float") else (math.floor(op.lambd), math.ceil(-op.lambd))
    bias, zero = g.scalar(op.bias, x), g.scalar(0, x)
    # unsigned x < -lambd (lambd >= 0) never holds, and -lambd has no constant of x's dtype (uint8 -1)
    inner = zero if g.dtype(x).startswith("uint") else R.where(R.less(x, g.scalar(lo, x)), R.add(x, bias), zero)
    return R.where(R.greater(x, g.scalar(hi, x)), R.subtract(x, bias), inner)
