"""ONNX lowerings of the resizes: one Resize node each (its mode, coordinate and rounding attributes
as the op's torch lowering computes them; see spec.py and numpy.py for the formulas).

Drawn spellings: the target as ``sizes`` (constant or computed in the graph from Shape) or as
``scales`` (only where every ratio out/in is exact in float32, so that floor(in * scale) is out and
the coordinates match; ResizeLinearScale always gives ``scales``, its meaning); ``roi`` omitted,
empty or the identity box; with ``sizes``, ``scales`` omitted or an empty tensor; from opset 18 the ``axes`` attribute naming the spatial dims (sizes or
scales for those dims only), ``antialias=0`` and ``keep_aspect_ratio_policy=stretch`` given or
omitted; attributes at their defaults (mode nearest, half_pixel, round_prefer_floor, cubic_coeff_a
-0.75, exclude_outside 0, extrapolation_value 0) given or omitted; and equivalent coordinate modes:
pytorch_half_pixel for half_pixel when no output size is 1, half_pixel_symmetric (opset 19) for
half_pixel (its offset is 0 when the output size is given), and for torch's nearest
(floor(i / f) with an integral upscale f) asymmetric + floor or any half-pixel mode + round_prefer_*
(the half-pixel source i/f + (1/f - 1)/2 never lies on a .5 tie and rounds to floor(i / f)).
"""
from fractions import Fraction

import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.resize import spec as R

_DEFAULTS = {"mode": "nearest", "coordinate_transformation_mode": "half_pixel",
             "nearest_mode": "round_prefer_floor", "cubic_coeff_a": -0.75, "exclude_outside": 0,
             "extrapolation_value": 0.0}


def _half_pixel_spellings(g, sizes) -> list:
    """The coordinate modes that compute half_pixel for these output sizes at this opset."""
    modes = ["half_pixel"]
    if all(s > 1 for s in sizes):
        modes.append("pytorch_half_pixel")
    if g.opset >= 19:
        modes.append("half_pixel_symmetric")
    return modes


def _exact_scale(n_in: int, n_out: int) -> bool:
    return Fraction(float(np.float32(n_out / n_in))) == Fraction(n_out, n_in)


def _target(g, x, out_sizes, spatial_only: bool, scale=None):
    """(roi, scales, sizes) inputs and ``axes`` attrs for resizing x's spatial dims to out_sizes
    (by the given ``scale`` on each of them when there is one)."""
    shape = list(g.shape(x))
    r = len(shape)
    full = shape[:2] + [int(s) for s in out_sizes]
    axes = list(range(2, r)) if spatial_only else list(range(r))
    attrs = {"axes": g.axes(axes, r)} if spatial_only else {}
    use_scales = scale is not None or (all(_exact_scale(shape[a], full[a]) for a in axes)
                                       and g.flip("target", "scales", "sizes"))
    roi_how = g.draw("roi", ["omitted", "empty", "identity"])
    roi = None if roi_how == "omitted" else g.const(
        np.array([] if roi_how == "empty" else [0.0] * len(axes) + [1.0] * len(axes)), DType.float32, "roi")
    if use_scales:
        ratio = [full[a] / shape[a] if scale is None or a < 2 else scale for a in axes]
        scales = g.const(np.array(ratio), DType.float32, "scales")
        return [x, roi, scales], attrs
    scales = g.const(np.zeros([0]), DType.float32, "scales") if g.flip("no_scales", "empty", "omitted") else None
    sizes = g.shape_operand([full[a] for a in axes], x)
    if g.opset >= 18 and g.flip("keep_aspect_ratio_policy", "stretch", "omitted"):
        attrs["keep_aspect_ratio_policy"] = "stretch"
    return [x, roi, scales, sizes], attrs


def _resize(g, x, out_sizes, scale=None, **attrs):
    """A Resize node to ``out_sizes`` with ``attrs`` (each at its default given or omitted, drawn)."""
    spatial_only = g.opset >= 18 and g.flip("axes", "spatial", "all")
    inputs, extra = _target(g, x, out_sizes, spatial_only, scale)
    if g.opset >= 18 and g.flip("antialias", "0", "omitted"):
        extra["antialias"] = 0
    for key, default in _DEFAULTS.items():
        value = attrs.pop(key, default)
        if value != default or g.flip(key, "given", "omitted"):
            attrs[key] = value
    return g.op("Resize", *inputs, shape=g.shape(x)[:2] + tuple(out_sizes), **attrs, **extra)


def _coord(g, coord: str, sizes) -> str:
    """``coord``, or for half_pixel (and pytorch_half_pixel when no size is 1) any spelling of it."""
    if coord == "pytorch_half_pixel" and all(s > 1 for s in sizes):
        coord = "half_pixel"
    return g.draw("coord", _half_pixel_spellings(g, sizes)) if coord == "half_pixel" else coord


def _sizes(op):
    return [int(s) for s in op.size]


@onnx_lowers(R.ResizeNearest)
def _nearest(op, g, x):
    """torch's nearest, floor(i * in / out) with out a multiple of in: asymmetric + floor, or a
    half-pixel mode with either round_prefer_* (drawn)."""
    sizes = _sizes(op)
    coord = g.draw("coord", ["asymmetric"] + _half_pixel_spellings(g, sizes))
    rounding = "floor" if coord == "asymmetric" else g.draw("nearest_mode", ["round_prefer_floor", "round_prefer_ceil"])
    return _resize(g, x, sizes, mode="nearest", coordinate_transformation_mode=coord, nearest_mode=rounding)


@onnx_lowers(R.ResizeNearestOnnx)
def _nearest_onnx(op, g, x):
    sizes = _sizes(op)
    return _resize(g, x, sizes, mode="nearest", coordinate_transformation_mode=_coord(g, op.coord, sizes),
                   nearest_mode=op.nearest_mode)


@onnx_lowers(R.ResizeLinear, R.ResizeLinearOnnx)
def _linear(op, g, x):
    sizes = _sizes(op)
    coord = op.coord if isinstance(op, R.ResizeLinearOnnx) else ("align_corners" if op.align_corners else "half_pixel")
    return _resize(g, x, sizes, mode="linear", coordinate_transformation_mode=_coord(g, coord, sizes))


@onnx_lowers(R.ResizeCubic, R.ResizeCubicOnnx)
def _cubic(op, g, x):
    sizes = _sizes(op)
    coord = op.coord if isinstance(op, R.ResizeCubicOnnx) else ("align_corners" if op.align_corners else "half_pixel")
    return _resize(g, x, sizes, mode="cubic", coordinate_transformation_mode=_coord(g, coord, sizes),
                   cubic_coeff_a=float(getattr(op, "cubic_coeff_a", -0.75)),
                   exclude_outside=int(getattr(op, "exclude_outside", False)))


@onnx_lowers(R.ResizeLinearScale)
def _linear_scale(op, g, x):
    """Always a ``scales`` input (the op's coordinates come from the scale, not from out/in)."""
    if op.coord == "half_pixel_symmetric":
        g.need_opset(19, "Resize with coordinate_transformation_mode=half_pixel_symmetric")
    sizes = op.output_sizes(g.shape(x)[2:])
    return _resize(g, x, sizes, scale=float(op.scale), mode="linear", coordinate_transformation_mode=op.coord)
