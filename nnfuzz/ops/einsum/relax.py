"""Relax lowering of Einsum: ``relax.op.einsum`` with the op's equation."""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_lowers
from nnfuzz.ops.einsum import spec as S


@relax_lowers(S.Einsum)
def _einsum(op, g, *xs):
    return R.einsum(list(xs), op.equation)
