"""ReduceSumSquare (integers in their own dtype), GlobalLpPool, LpNormalization and
MeanVarianceNormalization (floats in float64, rounded once by eval_op)."""
import numpy as np

from nnfuzz.ops.normalize import spec as M
from nnfuzz.reference.registry import evaluates

MVN_EPS = 1e-9


def num(x):
    return x if x.dtype.kind in "iu" else np.asarray(x, dtype=np.float64)


def lp_norm(v, p, axes):
    """(sum over ``axes`` of |v|^p)^(1/p), keeping the reduced dims."""
    s = np.sum(np.abs(v) ** p, axis=axes, keepdims=True)
    return s if p == 1 else np.sqrt(s)


@evaluates(M.ReduceSumSquare)
def _sum_square(op, x):
    v = num(x)
    return np.sum(v * v, axis=op.axis, dtype=v.dtype, keepdims=op.keepdims)


@evaluates(M.GlobalLpPool)
def _global_lp_pool(op, x):
    return lp_norm(num(x), op.p, tuple(range(2, x.ndim)))


@evaluates(M.LpNormalization)
def _lp_normalization(op, x):
    v = num(x)
    return v / lp_norm(v, op.p, op.axis)


@evaluates(M.MeanVarianceNormalization)
def _mvn(op, x):
    v = num(x)
    mean = np.mean(v, axis=op.axes, keepdims=True)
    var = np.mean(v * v, axis=op.axes, keepdims=True) - mean * mean
    return (v - mean) / (np.sqrt(var) + MVN_EPS)
