"""torch lowerings of the resizes: F.interpolate for its own modes; for the ONNX-mode ops (which
F.interpolate lacks) a gather per spatial axis with the reference's taps (``numpy.py``): each
output position the weighted sum of its taps, computed in float64 and rounded once (nearest: one
index_select, any dtype)."""
import numpy as np
import torch
import torch.nn.functional as F

from nnfuzz.ops.resize import spec as R
from nnfuzz.ops.resize.numpy import taps_for
from nnfuzz.materialize.torch.lowering import lowers, static_tensor

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


def _taps(op, n_in: int, n_out: int, part: int) -> np.ndarray:
    """The taps of one axis stacked, ``[taps, n_out]``: their int64 indices (``part`` 0) or weights (1)."""
    index, weight = taps_for(op)(n_in, n_out)
    return np.stack(index).astype("int64") if part == 0 else np.stack(weight)


@lowers(R.ResizeNearestOnnx)
def _nearest_onnx(op, x):
    for axis, n_out in enumerate(op.size, start=2):
        index = static_tensor(_taps, (op, int(x.shape[axis]), n_out, 0), x.device)  # int: a traced size is a tensor
        x = x.index_select(axis, index[0])
    return x


@lowers(R.ResizeLinearOnnx, R.ResizeCubicOnnx, R.ResizeLinearScale)
def _gathered(op, x):
    v = x.to(torch.float64)
    for axis, n_out in enumerate(op.output_sizes([int(d) for d in x.shape[2:]]), start=2):
        args = (op, int(v.shape[axis]), n_out)
        index, weight = static_tensor(_taps, args + (0,), v.device), static_tensor(_taps, args + (1,), v.device)
        shape = [1] * v.dim()
        shape[axis] = n_out
        v = sum(weight[j].reshape(shape) * v.index_select(axis, index[j]) for j in range(index.shape[0]))
    return v.to(x.dtype)
