"""Bitwise logic and shifts, integer Div (truncating), Mod (sign of the divisor) and Pow, all in the
inputs' dtype with numpy broadcasting. Only defined cases are evaluated (the ops' domains)."""
import numpy as np

from nnfuzz.ops.bitwise import spec as K
from nnfuzz.reference.registry import evaluates

LOGIC = {K.BitwiseAnd: np.bitwise_and, K.BitwiseOr: np.bitwise_or, K.BitwiseXor: np.bitwise_xor}


@evaluates(*LOGIC)
def _logic(op, x, y):
    return LOGIC[type(op)](x, y)


@evaluates(K.BitwiseNot)
def _not(op, x):
    return np.invert(x)


@evaluates(K.BitShift)
def _shift(op, x, y):
    shift = np.left_shift if op.direction == "LEFT" else np.right_shift  # bits shifted out are dropped
    return shift(x, y.astype(x.dtype))


@evaluates(K.Mod)
def _mod(op, x, y):
    return np.mod(x, y)  # numpy's integer mod takes the divisor's sign, as Python's %


@evaluates(K.IntDiv)
def _int_div(op, x, y):
    a, b = x.astype(np.int64), y.astype(np.int64)
    q = np.abs(a) // np.abs(b)  # the magnitude of the truncated quotient
    return np.where((a < 0) != (b < 0), -q, q)


@evaluates(K.IntPow)
def _int_pow(op, x, y):
    return np.power(x, y.astype(x.dtype))
