"""Resizing the spatial dims of an [N, C, *spatial] tensor to ``op.size``, separably: one spatial
axis after the other, each output position i a weighted sum of a few input positions (taps)
around its source coordinate. Floats in float64 (rounded once by eval_op).

Source coordinate of output i (input size S, output size O, scale O/S unless the op gives one), by
coordinate mode (the torch modes: ``align_corners`` or else ``half_pixel``):
  half_pixel:           (i + 0.5) / scale - 0.5
  pytorch_half_pixel:   as half_pixel, but 0 when O == 1
  align_corners:        i * (S-1) / (O-1)            (0 when O == 1)
  asymmetric:           i / scale
  half_pixel_symmetric: S/2 * (1 - O / (scale * S)) + (i + 0.5) / scale - 0.5
Nearest (torch): input index floor(i * S / O), computed exactly in integers; uint8 stays uint8.
Nearest (ONNX):  the source rounded by nearest_mode (round_prefer_floor: ties down, round_prefer_ceil:
         ties up, floor, ceil), clamped into [0, S-1]; one tap, weight 1, so any dtype stays as is.
Linear:  the source clamped into [0, S-1]; taps floor(src) and the next (clamped to S-1), weights
         1-t, t where t = src - floor(src).
Cubic:   taps floor(src) - 1 .. floor(src) + 2 with Keys' cubic convolution weights, coefficient
         A = -0.75 (torch's bicubic) unless the op says; a tap outside [0, S-1] reads the edge
         element, or with exclude_outside gets weight 0 and the others are scaled to sum 1.

These taps are also what the TF lowerings and the torch lowerings of the ONNX-mode ops gather with;
the check that keeps them honest is torch's F.interpolate for the torch modes and onnx's
ReferenceEvaluator (and the hand-computed cases in tests/reference) for the ONNX modes.
"""
import numpy as np

from nnfuzz.ops.resize import spec as R
from nnfuzz.reference.registry import evaluates

CUBIC_A = -0.75


def coord_mode(op) -> str:
    """The op's ONNX coordinate_transformation_mode."""
    if hasattr(op, "coord"):
        return op.coord
    return "align_corners" if op.align_corners else "half_pixel"


def source(n_in, n_out, coord, scale=None):
    """The source coordinate of every output position along one axis (float64)."""
    i = np.arange(n_out, dtype=np.float64)
    scale = n_out / n_in if scale is None else scale
    if coord == "half_pixel_symmetric":
        return n_in / 2 * (1 - n_out / (scale * n_in)) + (i + 0.5) / scale - 0.5
    if coord == "align_corners":
        return i * (n_in - 1) / (n_out - 1) if n_out > 1 else np.zeros(n_out)
    if coord == "asymmetric":
        return i / scale
    if coord == "pytorch_half_pixel" and n_out == 1:
        return np.zeros(n_out)
    if coord in ("half_pixel", "pytorch_half_pixel"):
        return (i + 0.5) / scale - 0.5
    raise ValueError(f"unknown coordinate mode {coord!r}; one of {R.COORD_MODES + ('half_pixel_symmetric',)}")


_ROUND = {
    "round_prefer_floor": lambda s: np.ceil(s - 0.5),
    "round_prefer_ceil": lambda s: np.floor(s + 0.5),
    "floor": np.floor,
    "ceil": np.ceil,
}


def nearest_taps(n_in, n_out, coord, nearest_mode):
    index = _ROUND[nearest_mode](source(n_in, n_out, coord)).astype(np.int64)
    return [np.clip(index, 0, n_in - 1)], [np.ones(n_out)]


def linear_taps(n_in, n_out, coord, scale=None):
    src = np.clip(source(n_in, n_out, coord, scale), 0.0, n_in - 1)
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    return [i0, np.minimum(i0 + 1, n_in - 1)], [1.0 - t, t]


def cubic_taps(n_in, n_out, coord, a=CUBIC_A, exclude_outside=False):
    src = source(n_in, n_out, coord)
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    near = lambda d: ((a + 2) * d - (a + 3)) * d * d + 1  # noqa: E731 - the kernel at 0 <= d <= 1
    far = lambda d: ((a * d - 5 * a) * d + 8 * a) * d - 4 * a  # noqa: E731 - the kernel at 1 < d < 2
    index = [i0 + k for k in (-1, 0, 1, 2)]
    weight = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    if exclude_outside:
        weight = [np.where((ix >= 0) & (ix < n_in), w, 0.0) for ix, w in zip(index, weight)]
        total = sum(weight)
        weight = [w / total for w in weight]
    return [np.clip(ix, 0, n_in - 1) for ix in index], weight


def taps_for(op):
    """``taps(n_in, n_out) -> (indices, weights)`` of one axis, for any of the resize ops."""
    coord = coord_mode(op)
    if isinstance(op, R.ResizeNearestOnnx):
        return lambda n_in, n_out: nearest_taps(n_in, n_out, coord, op.nearest_mode)
    if isinstance(op, (R.ResizeLinear, R.ResizeLinearOnnx)):
        return lambda n_in, n_out: linear_taps(n_in, n_out, coord)
    if isinstance(op, R.ResizeLinearScale):
        return lambda n_in, n_out: linear_taps(n_in, n_out, coord, op.scale)
    a, excl = getattr(op, "cubic_coeff_a", CUBIC_A), getattr(op, "exclude_outside", False)
    return lambda n_in, n_out: cubic_taps(n_in, n_out, coord, a, excl)


def _resample(v, axis, index, weight):
    """sum over taps k of weight[k][i] * v[..., index[k][i], ...] along ``axis``."""
    shape = [1] * v.ndim
    shape[axis] = -1
    return sum(w.reshape(shape) * np.take(v, ix, axis=axis) for ix, w in zip(index, weight))


@evaluates(R.ResizeNearest)
def _nearest(op, x):
    for axis, n_out in enumerate(op.size, start=2):
        n_in = x.shape[axis]
        x = np.take(x, np.arange(n_out) * n_in // n_out, axis=axis)  # one tap, weight 1: any dtype
    return x


@evaluates(R.ResizeNearestOnnx)
def _nearest_onnx(op, x):
    taps = taps_for(op)
    for axis, n_out in enumerate(op.size, start=2):
        (index,), _ = taps(x.shape[axis], n_out)
        x = np.take(x, index, axis=axis)
    return x


@evaluates(R.ResizeLinear, R.ResizeCubic, R.ResizeLinearOnnx, R.ResizeCubicOnnx, R.ResizeLinearScale)
def _separable(op, x):
    v, taps = np.asarray(x, dtype=np.float64), taps_for(op)
    for axis, n_out in enumerate(op.output_sizes(x.shape[2:]), start=2):
        v = _resample(v, axis, *taps(v.shape[axis], n_out))
    return v
