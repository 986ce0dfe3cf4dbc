import torch.nn.functional as F

from nnfuzz.ops.resize import spec as R
from nnfuzz.materialize.torch.lowering import lowers

_LINEAR = {1: "linear", 2: "bilinear", 3: "trilinear"}


@lowers(R.ResizeNearest)
def _nearest(op, x):
    return F.interpolate(x, size=op.size, mode="nearest")


@lowers(R.ResizeLinear)
def _linear(op, x):
    return F.interpolate(x, size=op.size, mode=_LINEAR[len(op.size)], align_corners=op.align_corners)


@lowers(R.ResizeCubic)
def _cubic(op, x):
    return F.interpolate(x, size=op.size, mode="bicubic", align_corners=op.align_corners)
