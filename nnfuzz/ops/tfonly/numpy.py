"""The TF-only binary ops, with numpy broadcasting (floats only: computed in float64, rounded once)."""
import numpy as np

from nnfuzz.ops.tfonly import spec as T
from nnfuzz.ops.binary.numpy import num
from nnfuzz.reference.registry import evaluates


@evaluates(T.SquaredDifference)
def _squared_difference(op, x, y):
    return np.square(num(x) - num(y))


@evaluates(T.FloorMod)
def _floor_mod(op, x, y):
    return np.mod(num(x), num(y))  # the result has the sign of y


@evaluates(T.DivNoNan)
def _div_no_nan(op, x, y):
    x, y = num(x), num(y)
    return np.where(y == 0, 0.0, x / np.where(y == 0, 1.0, y))
