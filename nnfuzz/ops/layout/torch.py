import torch
import torch.nn.functional as F

from nnfuzz.ops.layout import spec as L
from nnfuzz.materialize.torch.lowering import lowers


@lowers(L.Reshape)
def _reshape(op, x):
    return x.reshape(op.shape)


@lowers(L.Flatten)
def _flatten(op, x):
    return torch.flatten(x, op.axis)  # axis 1 exports as ONNX Flatten, others as Reshape


@lowers(L.Transpose)
def _transpose(op, x):
    return torch.transpose(x, op.dim0, op.dim1)


@lowers(L.Permute)
def _permute(op, x):
    return x.permute(op.perm)


@lowers(L.Squeeze)
def _squeeze(op, x):
    return torch.squeeze(x, op.axis)


@lowers(L.Unsqueeze)
def _unsqueeze(op, x):
    return torch.unsqueeze(x, op.axis)


@lowers(L.Expand)
def _expand(op, x):
    return x.expand(op.shape)


@lowers(L.Tile)
def _tile(op, x):
    return x.repeat(op.repeats)


@lowers(L.DepthToSpace)
def _depth_to_space(op, x):
    return F.pixel_shuffle(x, op.blocksize)


@lowers(L.DepthToSpaceDCR)
def _depth_to_space_dcr(op, x):
    n, c, h, w = x.shape
    b = op.blocksize
    y = x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)  # to (n, c, h, i, w, j)
    return y.reshape(n, c // (b * b), h * b, w * b)


@lowers(L.SpaceToDepth)
def _space_to_depth(op, x):
    return F.pixel_unshuffle(x, op.blocksize)  # exports as Reshape/Transpose, not SpaceToDepth


@lowers(L.Tril)
def _tril(op, x):
    return torch.tril(x, op.diagonal)


@lowers(L.Triu)
def _triu(op, x):
    return torch.triu(x, op.diagonal)


@lowers(L.Flip)
def _flip(op, x):
    return torch.flip(x, [op.axis])


@lowers(L.Roll)
def _roll(op, x):
    return torch.roll(x, op.shift, op.axis)
