import torch

from nnfuzz.ops.select import spec as S
from nnfuzz.materialize.torch.lowering import lowers
from nnfuzz.ops.binary.torch import f64_scalar_safe


@lowers(S.Where)
def _where(op, cond, x, y):
    return f64_scalar_safe(torch.where)(cond, x, y)


@lowers(S.Clip)
def _clip(op, x):
    if x.dtype.is_floating_point:
        return f64_scalar_safe(lambda v: torch.clamp(v, op.min, op.max))(x)
    return torch.clamp(x, int(op.min), int(op.max))  # float bounds would promote an int tensor


@lowers(S.Cast)
def _cast(op, x):
    return x.to(op.to.torch())
