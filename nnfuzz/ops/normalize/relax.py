"""Relax lowerings of ReduceSumSquare, GlobalLpPool, LpNormalization and MeanVarianceNormalization:
the torch lowerings' formulas in Relax ops."""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_lowers
from nnfuzz.ops.normalize import spec as M
from nnfuzz.ops.normalize.numpy import MVN_EPS


def _norm(g, x, p, axes):
    if p == 1:
        return R.sum(R.abs(x), axes, True)
    return R.sqrt(R.sum(R.multiply(x, x), axes, True))


@relax_lowers(M.ReduceSumSquare)
def _sum_square(op, g, x):
    return R.sum(R.multiply(x, x), op.axis, op.keepdims)


@relax_lowers(M.GlobalLpPool)
def _global_lp_pool(op, g, x):
    return _norm(g, x, op.p, list(range(2, g.rank(x))))


@relax_lowers(M.LpNormalization)
def _lp_normalization(op, g, x):
    return R.divide(x, _norm(g, x, op.p, [op.axis]))


@relax_lowers(M.MeanVarianceNormalization)
def _mvn(op, g, x):
    axes = list(op.axes)
    mean = g.emit(R.mean(x, axes, True))
    var = R.subtract(R.mean(R.multiply(x, x), axes, True), R.multiply(mean, mean))
    return R.divide(R.subtract(x, mean), R.add(R.sqrt(var), g.scalar(MVN_EPS, x)))
