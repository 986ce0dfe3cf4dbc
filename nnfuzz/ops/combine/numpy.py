"""Concat, Split, Slice, Gather: they pick and join values along one axis without computing any,
so every dtype is kept as it is."""
import numpy as np

from nnfuzz.ops.combine import spec as C
from nnfuzz.reference.registry import evaluates


@evaluates(C.Concat)
def _concat(op, *xs):
    return np.concatenate(xs, axis=op.axis)


@evaluates(C.Split)
def _split(op, x):
    cuts = np.cumsum(op.sizes)[:-1]  # consecutive pieces of the given sizes
    return np.split(x, cuts, axis=op.axis)


@evaluates(C.Slice)
def _slice(op, x):
    return np.take(x, np.arange(op.start, op.end, op.step), axis=op.axis)


@evaluates(C.Gather)
def _gather(op, x):
    return np.take(x, np.asarray(op.indices, dtype=np.int64), axis=op.axis)
