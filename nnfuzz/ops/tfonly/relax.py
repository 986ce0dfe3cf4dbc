"""Relax lowerings of the TF-only ops, as their torch lowerings compute them."""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_each, relax_lowers
from nnfuzz.ops.tfonly import spec as T


@relax_lowers(T.SquaredDifference)
def _squared_difference(op, g, x, y):
    d = g.emit(R.subtract(x, y))
    return R.multiply(d, d)


@relax_lowers(T.DivNoNan)
def _div_no_nan(op, g, x, y):
    zero = g.emit(R.equal(y, g.scalar(0, y)))
    return R.where(zero, g.scalar(0, x), R.divide(x, R.where(zero, g.scalar(1, y), y)))


relax_each({T.FloorMod: R.floor_mod})
