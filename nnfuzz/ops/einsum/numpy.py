"""Einsum's reference: numpy.einsum, floats in float64, integers in their dtype (sums wrap)."""
import numpy as np

from nnfuzz.ops.einsum import spec as S
from nnfuzz.reference.registry import evaluates


@evaluates(S.Einsum)
def _einsum(op, *xs):
    return np.einsum(op.equation, *[x if x.dtype.kind in "iu" else np.asarray(x, dtype=np.float64) for x in xs])
