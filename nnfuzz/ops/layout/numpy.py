"""Layout ops: they move, copy or mask elements without computing new values, so every dtype
(bool included) is kept as it is. Axes are non-negative; shapes are plain ints."""
import math

import numpy as np

from nnfuzz.ops.layout import spec as L
from nnfuzz.reference.registry import evaluates


@evaluates(L.Reshape)
def _reshape(op, x):
    return np.reshape(x, op.shape)  # row-major (C) order


@evaluates(L.Flatten)
def _flatten(op, x):
    return np.reshape(x, x.shape[:op.axis] + (math.prod(x.shape[op.axis:]),))


@evaluates(L.Transpose)
def _transpose(op, x):
    return np.swapaxes(x, op.dim0, op.dim1)


@evaluates(L.Permute)
def _permute(op, x):
    return np.transpose(x, op.perm)  # y.shape[i] == x.shape[perm[i]]


@evaluates(L.Squeeze)
def _squeeze(op, x):
    return np.squeeze(x, axis=op.axis)


@evaluates(L.Unsqueeze)
def _unsqueeze(op, x):
    return np.expand_dims(x, op.axis)


@evaluates(L.Expand)
def _expand(op, x):
    return np.broadcast_to(x, op.shape)


@evaluates(L.Tile)
def _tile(op, x):
    return np.tile(x, op.repeats)


@evaluates(L.DepthToSpace)
def _depth_to_space(op, x):
    # CRD: channel c*b*b + i*b + j of the input goes to channel c, pixel (h*b + i, w*b + j)
    n, c, h, w = x.shape
    b = op.blocksize
    y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return y.reshape(n, c // (b * b), h * b, w * b)


@evaluates(L.DepthToSpaceDCR)
def _depth_to_space_dcr(op, x):
    # DCR: channel (i*b + j)*C + c of the input goes to channel c, pixel (h*b + i, w*b + j)
    n, c, h, w = x.shape
    b = op.blocksize
    depth = c // (b * b)
    y = np.empty((n, depth, h * b, w * b), dtype=x.dtype)
    for i in range(b):
        for j in range(b):
            k = i * b + j
            y[:, :, i::b, j::b] = x[:, k * depth:(k + 1) * depth]
    return y


@evaluates(L.SpaceToDepth)
def _space_to_depth(op, x):
    # the inverse of DepthToSpace (CRD, as torch.pixel_unshuffle; ONNX SpaceToDepth is DCR)
    n, c, h, w = x.shape
    b = op.blocksize
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 1, 3, 5, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


def _col_minus_row(x):
    """j - i for each entry (i, j) of the last two axes."""
    rows, cols = x.shape[-2:]
    return np.arange(cols)[None, :] - np.arange(rows)[:, None]


@evaluates(L.Tril)
def _tril(op, x):
    return np.where(_col_minus_row(x) <= op.diagonal, x, np.zeros((), x.dtype))


@evaluates(L.Triu)
def _triu(op, x):
    return np.where(_col_minus_row(x) >= op.diagonal, x, np.zeros((), x.dtype))


@evaluates(L.Flip)
def _flip(op, x):
    return np.flip(x, axis=op.axis)


@evaluates(L.Roll)
def _roll(op, x):
    return np.roll(x, op.shift, axis=op.axis)  # y[(i + shift) mod dim] = x[i]
