"""Relax lowerings of Where, Clip (bounds as the input's dtype, as the torch lowering) and Cast."""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_lowers
from nnfuzz.ops.select import spec as S


@relax_lowers(S.Where)
def _where(op, g, cond, x, y):
    return R.where(cond, x, y)


@relax_lowers(S.Clip)
def _clip(op, g, x):
    # min/max of scalars in x's dtype (R.clip takes PrimValue bounds, cast by its legalization)
    return R.minimum(R.maximum(x, g.scalar(op.min, x)), g.scalar(op.max, x))


@relax_lowers(S.Cast)
def _cast(op, g, x):
    return R.astype(x, op.to.value)
