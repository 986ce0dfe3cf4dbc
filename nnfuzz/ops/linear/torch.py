import torch
import torch.nn.functional as F

from nnfuzz.ops.linear import spec as L
from nnfuzz.materialize.torch.lowering import lower_each, lowers

lower_each({
    L.MatMul: torch.matmul,
    L.Linear: F.linear,
})


@lowers(L.Gemm)
def _gemm(op, a, b, c):
    a = a.t() if op.trans_a else a
    b = b.t() if op.trans_b else b
    return torch.addmm(c, a, b, beta=op.beta, alpha=op.alpha)
