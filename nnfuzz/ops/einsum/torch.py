import torch

from nnfuzz.materialize.torch.lowering import lowers
from nnfuzz.ops.einsum import spec as S


@lowers(S.Einsum)
def _einsum(op, *xs):
    return torch.einsum(op.equation, *xs).to(xs[0].dtype)  # torch sums integers into int64
