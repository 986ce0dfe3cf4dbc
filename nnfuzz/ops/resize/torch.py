"""torch lowerings of the resizes: F.interpolate for its own modes; for the ONNX-mode ops (which
F.interpolate lacks) a gather per spatial axis with the reference's taps (``numpy.py``): each
output position the weighted sum of its taps, computed in float64 and rounded once (nearest: one
index_select, any dtype)."""
import torch
import torch.nn.functional as F

from nnfuzz.ops.resize import spec as R
from nnfuzz.ops.resize.numpy import taps_for
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


def _index(ix, device):
    return torch.from_numpy(ix.astype("int64")).to(device)


@lowers(R.ResizeNearestOnnx)
def _nearest_onnx(op, x):
    taps = taps_for(op)
    for axis, n_out in enumerate(op.size, start=2):
        (index,), _ = taps(int(x.shape[axis]), n_out)  # int: a traced size is a tensor
        x = x.index_select(axis, _index(index, x.device))
    return x


@lowers(R.ResizeLinearOnnx, R.ResizeCubicOnnx, R.ResizeLinearScale)
def _gathered(op, x):
    v, taps = x.to(torch.float64), taps_for(op)
    for axis, n_out in enumerate(op.output_sizes([int(d) for d in x.shape[2:]]), start=2):
        index, weight = taps(int(v.shape[axis]), n_out)
        shape = [1] * v.dim()
        shape[axis] = n_out
        v = sum(torch.from_numpy(w).to(v.device).reshape(shape) * v.index_select(axis, _index(ix, v.device))
                for ix, w in zip(index, weight))
    return v.to(x.dtype)
