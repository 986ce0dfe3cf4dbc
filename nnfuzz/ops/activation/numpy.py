"""The activations with ONNX's parameters, in float64 for floats (rounded once by eval_op) and in
their own dtype for integers (PRelu's x * slope and Shrink's x +- bias wrap like C; the value search
keeps them in range)."""
import numpy as np

from nnfuzz.ops.activation import spec as A
from nnfuzz.reference.registry import evaluates


def num(x):
    return x if x.dtype.kind in "iu" else np.asarray(x, dtype=np.float64)


@evaluates(A.PRelu)
def _prelu(op, x, slope):
    v = num(x)
    return np.where(v > 0, v, v * num(slope))


@evaluates(A.HardSigmoidAlphaBeta)
def _hard_sigmoid(op, x):
    return np.clip(op.alpha * num(x) + op.beta, 0.0, 1.0)


@evaluates(A.ThresholdedRelu)
def _thresholded_relu(op, x):
    v = num(x)
    return np.where(v > op.alpha, v, 0.0)


@evaluates(A.Shrink)
def _shrink(op, x):
    v = num(x).astype(np.int64) if x.dtype.kind in "iu" else num(x)
    bias = int(op.bias) if x.dtype.kind in "iu" else op.bias
    return np.where(v > op.lambd, v - bias, np.where(v < -op.lambd, v + bias, 0))
