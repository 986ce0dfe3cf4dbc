"""ONNX lowerings of the layout ops, and ``reshape_to``: a Reshape in a drawn spelling (also used by
the compositions here).

Drawn spellings: Reshape's target with 0 (copy the input's dim) and -1 (infer one dim) where they
give the same shape, ``allowzero`` omitted, 0 or 1 (opset 14+, when no 0 is written), the target
constant or computed from the input's Shape; Transpose's perm omitted when it is the reversal;
Squeeze/Unsqueeze axes positive or negative, Squeeze's axes omitted when the axis is the only 1-dim,
both also as a Reshape; Expand's target with 1 where the input already has the dim; Flip and Roll
as Slice/Concat or Gather; Tril/Triu as Trilu (opset 14+) or a constant mask and Where.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.combine.onnx import INT_MIN, slice_axis, write_slice
from nnfuzz.ops.layout import spec as L


def reshape_to(g, x: str, shape: Sequence[int]) -> str:
    """``x`` reshaped to ``shape`` (every dim >= 1)."""
    shape = [int(d) for d in shape]
    values = list(shape)
    dims = g.shape(x)
    copies = [i for i in range(min(len(dims), len(shape))) if dims[i] == shape[i]]
    if copies and g.flip("reshape_zero", "0 copies", "dims"):
        for i in copies:
            values[i] = 0
    free = [i for i, v in enumerate(values) if v != 0]
    if free and g.flip("reshape_infer", "-1", "dims"):
        values[free[int(g.rng.integers(len(free)))]] = -1
    allowzero = None
    if g.opset >= 14 and 0 not in values:
        allowzero = g.draw("allowzero", [None, 0, 1])
    return g.op("Reshape", x, g.shape_operand(values, x), allowzero=allowzero, shape=shape)


@onnx_lowers(L.Reshape)
def _reshape(op, g, x):
    return reshape_to(g, x, op.shape)


@onnx_lowers(L.Flatten)
def _flatten(op, g, x):
    """torch.flatten(x, axis) keeps the dims before ``axis``; ONNX Flatten always gives 2-D, so it is
    used alone for axis 1, followed by a Squeeze for axis 0 (its [1, N]), and Reshape otherwise."""
    dims = g.shape(x)
    out = list(dims[:op.axis]) + [int(np.prod(dims[op.axis:], dtype=np.int64))]
    if op.axis == 1 and g.flip("flatten", "Flatten", "Reshape"):
        return g.op("Flatten", x, axis=g.axis(1, g.rank(x)), shape=out)
    if op.axis == 0 and g.flip("flatten", "Flatten+Squeeze", "Reshape"):
        flat = g.op("Flatten", x, axis=0, shape=[1] + out)
        return _squeeze_axis(g, flat, 0)
    return reshape_to(g, x, out)


def _transpose(g, x, perm: Sequence[int]) -> str:
    perm = [int(p) for p in perm]
    shape = [g.shape(x)[p] for p in perm]
    if perm == list(range(len(perm)))[::-1] and g.flip("perm", "omitted", "given"):
        return g.op("Transpose", x, shape=shape)
    return g.op("Transpose", x, perm=perm, shape=shape)


@onnx_lowers(L.Transpose)
def _swap(op, g, x):
    perm = list(range(g.rank(x)))
    perm[op.dim0], perm[op.dim1] = op.dim1, op.dim0
    return _transpose(g, x, perm)


@onnx_lowers(L.Permute)
def _permute(op, g, x):
    return _transpose(g, x, op.perm)


def _squeeze_axis(g, x: str, axis: int) -> str:
    """Squeeze the 1-dim ``axis`` of ``x``: axes given, omitted when no other dim is 1, or a Reshape."""
    dims = list(g.shape(x))
    out = dims[:axis] + dims[axis + 1:]
    forms = ["axes", "Reshape"] + (["all"] if dims.count(1) == 1 else [])
    form = g.draw("squeeze", forms)
    if form == "Reshape":
        return reshape_to(g, x, out)
    if form == "all":
        return g.op("Squeeze", x, shape=out)
    return g.op("Squeeze", x, g.ints([g.axis(axis, len(dims))], "axes"), shape=out)


@onnx_lowers(L.Squeeze)
def _squeeze(op, g, x):
    return _squeeze_axis(g, x, op.axis)


@onnx_lowers(L.Unsqueeze)
def _unsqueeze(op, g, x):
    """Unsqueeze (its axis counts in the output's rank) or a Reshape."""
    dims = list(g.shape(x))
    out = dims[:op.axis] + [1] + dims[op.axis:]
    if g.flip("unsqueeze", "Reshape", "Unsqueeze"):
        return reshape_to(g, x, out)
    return g.op("Unsqueeze", x, g.ints([g.axis(op.axis, len(out))], "axes"), shape=out)


@onnx_lowers(L.Expand)
def _expand(op, g, x):
    """Expand broadcasts both ways: a target dim the input already has may be written as 1, and with
    equal ranks leading target dims the input has may be left out."""
    dims, target = list(g.shape(x)), [int(s) for s in op.shape]
    lead = len(target) - len(dims)
    values = list(target)
    if g.flip("expand_ones", "1 where kept", "dims"):
        values = [1 if i >= lead and dims[i - lead] == t else t for i, t in enumerate(target)]
    if lead == 0:
        kept = next((i for i, (d, t) in enumerate(zip(dims, target)) if d != t), len(dims))
        if kept and g.flip("expand_rank", "shorter", "full"):
            values = values[int(g.rng.integers(1, kept + 1)):]
    return g.op("Expand", x, g.shape_operand(values, x), shape=target)


@onnx_lowers(L.Tile)
def _tile(op, g, x):
    return g.op("Tile", x, g.shape_operand(op.repeats, x))


def _blocks(g, x, split: Sequence[int], perm: Sequence[int], out: Sequence[int]) -> str:
    """Reshape to ``split``, transpose by ``perm``, reshape to ``out``: a depth/space rearrangement."""
    return reshape_to(g, _transpose(g, reshape_to(g, x, split), perm), out)


@onnx_lowers(L.DepthToSpace)
def _depth_to_space(op, g, x):
    """torch.pixel_shuffle is DepthToSpace mode CRD, or its Reshape/Transpose/Reshape (drawn)."""
    n, c, h, w = g.shape(x)
    b = op.blocksize
    if g.flip("depth_to_space", "Reshape+Transpose", "DepthToSpace"):
        return _blocks(g, x, [n, c // (b * b), b, b, h, w], [0, 1, 4, 2, 5, 3], [n, c // (b * b), h * b, w * b])
    return g.op("DepthToSpace", x, blocksize=b, mode="CRD")


@onnx_lowers(L.DepthToSpaceDCR)
def _depth_to_space_dcr(op, g, x):
    """DepthToSpace in its default mode DCR (attribute omitted or given), or its Reshape/Transpose/Reshape."""
    n, c, h, w = g.shape(x)
    b = op.blocksize
    form = g.draw("depth_to_space", ["DepthToSpace", "mode=DCR", "Reshape+Transpose"])
    if form == "Reshape+Transpose":
        return _blocks(g, x, [n, b, b, c // (b * b), h, w], [0, 3, 4, 1, 5, 2], [n, c // (b * b), h * b, w * b])
    return g.op("DepthToSpace", x, blocksize=b, mode="DCR" if form == "mode=DCR" else None)


@onnx_lowers(L.SpaceToDepth)
def _space_to_depth(op, g, x):
    """torch.pixel_unshuffle puts block offset (i, j) of channel c at channel c*b*b + i*b + j (CRD);
    ONNX SpaceToDepth (DCR) puts it at (i*b + j)*C + c. Written as Reshape/Transpose/Reshape, or as
    SpaceToDepth followed by the channel regrouping (drawn; SpaceToDepth alone when C is 1)."""
    n, c, h, w = g.shape(x)
    b = op.blocksize
    out = [n, c * b * b, h // b, w // b]
    if g.flip("space_to_depth", "SpaceToDepth", "Reshape+Transpose"):
        y = g.op("SpaceToDepth", x, blocksize=b, shape=out)
        return y if c == 1 else _blocks(g, y, [n, b * b, c, h // b, w // b], [0, 2, 1, 3, 4], out)
    return _blocks(g, x, [n, c, h // b, b, w // b, b], [0, 1, 3, 5, 2, 4], out)


def _triangle(op, g, x, upper: bool) -> str:
    """Trilu (opset 14+; k omitted when 0, ``upper`` omitted when 1) or a constant mask with Where (or
    And for bool)."""
    forms = (["Trilu"] if g.opset >= 14 else []) + ["Where", "Where(not mask)"]
    forms += ["And"] if g.dtype(x) is DType.bool else []
    form = g.draw("trilu", forms)
    if form == "Trilu":
        k = None if op.diagonal == 0 and g.flip("k", "omitted", "given") else g.scalar(op.diagonal, DType.int64, "k")
        flag = None if upper and g.flip("upper", "omitted", "given") else int(upper)
        return g.op("Trilu", x, k, upper=flag)
    rows, cols = g.shape(x)[-2:]
    keep = (np.triu if upper else np.tril)(np.ones((rows, cols), dtype=bool), op.diagonal)
    zero = g.like(0, x, "zero")
    if form == "And":
        return g.op("And", x, g.const(keep, DType.bool, "mask"))
    if form == "Where":
        return g.op("Where", g.const(keep, DType.bool, "mask"), x, zero)
    return g.op("Where", g.const(~keep, DType.bool, "mask"), zero, x)


@onnx_lowers(L.Tril)
def _tril(op, g, x):
    return _triangle(op, g, x, upper=False)


@onnx_lowers(L.Triu)
def _triu(op, g, x):
    return _triangle(op, g, x, upper=True)


@onnx_lowers(L.Flip)
def _flip(op, g, x):
    """A Slice with step -1 (start -1 or dim-1, end past the front: INT_MIN or -dim-1), or a Gather of
    the reversed positions (drawn)."""
    d = g.shape(x)[op.axis]
    form = g.draw("flip", ["Slice", "Gather"])
    if form == "Gather":
        return g.op("Gather", x, g.ints(np.arange(d)[::-1], "idx"), axis=g.axis(op.axis, g.rank(x)))
    dtype = g.draw("slice_index", [DType.int64, DType.int32])
    start = g.draw("flip_start", [-1, d - 1])
    end = g.draw("flip_end", [INT_MIN[dtype], -d - 1])
    return write_slice(g, x, op.axis, start, end, -1, g.shape(x), dtype)


@onnx_lowers(L.Roll)
def _roll(op, g, x):
    """y[(i + shift) mod d] = x[i]: the last ``shift mod d`` entries moved to the front, by two Slices
    and a Concat or by a Gather of the source positions (drawn). A zero shift is the input itself."""
    d = g.shape(x)[op.axis]
    s = op.shift % d
    if s == 0:
        return x
    if g.flip("roll", "Gather", "Slice+Concat"):
        src = (np.arange(d) - s) % d
        return g.op("Gather", x, g.ints(src, "idx"), axis=g.axis(op.axis, g.rank(x)))
    tail = slice_axis(g, x, op.axis, d - s, d)
    head = slice_axis(g, x, op.axis, 0, d - s)
    return g.op("Concat", tail, head, axis=g.axis(op.axis, g.rank(x)), shape=g.shape(x))
