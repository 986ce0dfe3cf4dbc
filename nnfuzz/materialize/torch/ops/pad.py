import torch.nn.functional as F

from nnfuzz.abstract.ops import pad as P
from nnfuzz.materialize.torch.lowering import lowers


@lowers(P.ConstantPad)
def _constant_pad(op, x):
    return F.pad(x, op.pads, mode="constant", value=op.value)


@lowers(P.ReflectPad)
def _reflect_pad(op, x):
    return F.pad(x, op.pads, mode="reflect")


@lowers(P.ReplicatePad)
def _replicate_pad(op, x):
    return F.pad(x, op.pads, mode="replicate")


@lowers(P.CircularPad)
def _circular_pad(op, x):
    return F.pad(x, op.pads, mode="circular")
