import torch

from nnfuzz.materialize.torch.lowering import lowers
from nnfuzz.ops.einsum import spec as S


@lowers(S.Einsum)
def _einsum(op, *xs):
    """bfloat16 is summed in float32 (as torch's CPU kernels accumulate it): ONNX Einsum has no bfloat16,
    so torch's exporter then writes Cast, Einsum in float32, Cast instead of an invalid Einsum."""
    dt = xs[0].dtype
    if dt == torch.bfloat16:
        xs = [x.float() for x in xs]
    return torch.einsum(op.equation, *xs).to(dt)  # torch sums integers into int64
