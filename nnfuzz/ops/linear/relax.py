"""Relax lowerings of MatMul, Linear (matmul with W transposed, plus b) and Gemm (its formula)."""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_lowers
from nnfuzz.ops.linear import spec as L


@relax_lowers(L.MatMul)
def _matmul(op, g, a, b):
    return R.matmul(a, b)


@relax_lowers(L.Linear)
def _linear(op, g, x, w, b):
    return R.linear(x, w, b)


@relax_lowers(L.Gemm)
def _gemm(op, g, a, b, c):
    a = R.permute_dims(a, [1, 0]) if op.trans_a else a
    b = R.permute_dims(b, [1, 0]) if op.trans_b else b
    return R.add(R.multiply(g.scalar(op.beta, c), c), R.multiply(g.scalar(op.alpha, c), R.matmul(a, b)))
