"""Broadcasting binary ops and logical Not, with numpy broadcasting (as the abstract ops).

Floats: the formula in float64 (rounded once by eval_op). Integers: in their own dtype, so
Add/Sub/Mul wrap like C. Comparisons give bool; And/Or/Xor/Not take and give bool.
"""
import numpy as np

from nnfuzz.ops.binary import spec as B
from nnfuzz.reference.registry import evaluates


def num(x):
    """Integers and bools as they are, floats (bfloat16 included) in float64."""
    return x if x.dtype.kind in "iub" else np.asarray(x, dtype=np.float64)


FORMULAS = {
    B.Add: np.add,
    B.Sub: np.subtract,
    B.Mul: np.multiply,
    B.Div: np.true_divide,  # floats only
    B.Pow: np.power,  # floats only
    B.Fmod: np.fmod,  # floats only; C fmod: the result has the sign of x
    B.Max: np.maximum,  # NaN propagates
    B.Min: np.minimum,
    B.Equal: np.equal,
    B.Greater: np.greater,
    B.Less: np.less,
    B.GreaterEqual: np.greater_equal,
    B.LessEqual: np.less_equal,
    B.And: np.logical_and,
    B.Or: np.logical_or,
    B.Xor: np.logical_xor,
}


@evaluates(*FORMULAS)
def _binary(op, x, y):
    return FORMULAS[type(op)](num(x), num(y))


@evaluates(B.Not)
def _not(op, x):
    return np.logical_not(x)
