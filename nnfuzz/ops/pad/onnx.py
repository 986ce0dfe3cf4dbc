"""ONNX lowerings of the pads: one Pad node (modes constant, reflect, edge; wrap from opset 19), the
pads in ONNX order (all begins, then all ends, first axis first).

Drawn spellings: pads for every axis, or (opset 18+) for the padded axes only with an ``axes`` input
(ascending or torch's last-first order, positive or negative); mode "constant" omitted or given; a
zero constant_value omitted or given; CircularPad as mode "wrap" (opset 19+) or Slices and Concat.

A negative (cropping) ConstantPad is written as Slices that crop, then a Pad with the rest: ONNX Pad
takes negative pads, but onnx's ReferenceEvaluator (np.pad) rejects them, so the one-node spelling
could not be checked.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.combine.onnx import slice_axis
from nnfuzz.ops.pad import spec as P
from nnfuzz.ops.pad.numpy import per_axis


def _pad(g, x: str, pairs: List[Tuple[int, int]], padded: List[int], mode: str, value: Optional[float] = None) -> str:
    """One Pad node giving ``pairs[a]`` = (begin, end) to each axis ``a`` of ``x``; ``padded`` lists the
    op's padded axes, last first (an ``axes`` input may name just those)."""
    rank = len(pairs)
    out = [d + b + e for d, (b, e) in zip(g.shape(x), pairs)]
    axes_in = None
    if g.opset >= 18 and g.flip("pad_axes", "axes input", "all axes"):
        order = padded if g.flip("pad_axes_order", "last first", "ascending") else sorted(padded)
        pads = [pairs[a][0] for a in order] + [pairs[a][1] for a in order]
        axes_in = g.ints(g.axes(order, rank), "axes")
    else:
        pads = [b for b, _ in pairs] + [e for _, e in pairs]
    fill = None
    if mode == "constant" and (value != 0 or g.flip("constant_value", "given", "omitted")):
        fill = g.like(value, x, "value")
    if mode == "constant" and g.flip("pad_mode", "given", "omitted"):
        mode = None
    return g.op("Pad", x, g.ints(pads, "pads"), fill, axes_in, mode=mode, shape=out)


def _padded_axes(op, rank: int) -> List[int]:
    return [rank - 1 - k for k in range(len(op.pads) // 2)]


@onnx_lowers(P.ConstantPad)
def _constant_pad(op, g, x):
    """Negative pads crop first (Slices), as torch does; the rest is one Pad (none when nothing grows)."""
    rank = g.rank(x)
    pairs = per_axis(op, rank)
    for a, (b, e) in enumerate(pairs):
        if b < 0 or e < 0:
            d = g.shape(x)[a]
            x = slice_axis(g, x, a, max(-b, 0), d - max(-e, 0))
    grow = [(max(b, 0), max(e, 0)) for b, e in pairs]
    if any(b or e for b, e in pairs) and not any(b or e for b, e in grow):
        return x
    return _pad(g, x, grow, _padded_axes(op, rank), "constant", float(op.value))


@onnx_lowers(P.ReflectPad)
def _reflect_pad(op, g, x):
    return _pad(g, x, per_axis(op, g.rank(x)), _padded_axes(op, g.rank(x)), "reflect")


@onnx_lowers(P.ReplicatePad)
def _replicate_pad(op, g, x):
    return _pad(g, x, per_axis(op, g.rank(x)), _padded_axes(op, g.rank(x)), "edge")


@onnx_lowers(P.CircularPad)
def _circular_pad(op, g, x):
    """Pad mode "wrap" (opset 19+), or per padded axis the last ``begin`` entries, the input and the
    first ``end`` entries concatenated (drawn; the only spelling before opset 19)."""
    rank = g.rank(x)
    pairs = per_axis(op, rank)
    if g.opset >= 19 and not g.flip("circular", "Slice+Concat", "wrap"):
        return _pad(g, x, pairs, _padded_axes(op, rank), "wrap")
    for a in _padded_axes(op, rank):
        b, e = pairs[a]
        if not (b or e):
            continue
        d = g.shape(x)[a]
        pieces = ([slice_axis(g, x, a, d - b, d)] if b else []) + [x] + ([slice_axis(g, x, a, 0, e)] if e else [])
        shape = list(g.shape(x))
        shape[a] = d + b + e
        x = g.op("Concat", *pieces, axis=g.axis(a, rank), shape=shape)
    return x
