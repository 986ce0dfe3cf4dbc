"""Resize the spatial dims of an [N, C, *spatial] tensor (torch F.interpolate, ONNX Resize).

The output spatial ``size`` is given directly (one symbolic "size" attribute per spatial dim), so
any up- or down-scale occurs. One class per interpolation mode: the modes differ in the ranks they
accept (cubic is 2-D only) and in whether ``align_corners`` applies, which a single class with a
``mode`` choice could only express as rules that fail for some drawn attribute combinations.

ResizeNearest/Linear/Cubic are torch's F.interpolate modes. The ``*Onnx`` classes add ONNX Resize's
other semantics that torch lacks (coordinate_transformation_mode ``asymmetric`` and
``pytorch_half_pixel``, nearest_mode ``round_prefer_floor``/``round_prefer_ceil``/``floor``/``ceil``,
cubic_coeff_a -0.5, exclude_outside). Source coordinate of output i (in -> out, scale = out/in):
  half_pixel:          (i + 0.5) / scale - 0.5
  pytorch_half_pixel:  as half_pixel, but 0 when out == 1
  align_corners:       i * (in - 1) / (out - 1)    (0 when out == 1)
  asymmetric:          i / scale
Taps that fall outside [0, in-1] read the nearest edge element. ``half_pixel_symmetric`` (opset 19)
equals half_pixel when the output sizes are given (its offset is 0), so it is a spelling of it
there; ResizeLinearScale resizes by a given scale (output floor(in * scale), coordinates from the
scale itself, not from out/in), where it differs:
  half_pixel_symmetric: in/2 * (1 - out / (scale * in)) + (i + 0.5) / scale - 0.5
``tf_crop_and_resize`` (an roi) is out of scope.
"""
from fractions import Fraction

from nnfuzz.abstract.accuracy import Accuracy, EXACT
from nnfuzz.abstract.arith import Or, divisible, fdiv
from nnfuzz.abstract.dtype import DTYPE_FLOATS, DType
from nnfuzz.abstract.op import AbsOpBase, ranks
from nnfuzz.abstract.tensor import AbsTensor


# Linear and cubic resampling: coordinates in float32 (ONNX's scales are float32) and weights that cancel;
# the calibration measured 21 ulps (docs/accuracy.md), item 7's 10-minute campaigns 84 and 167 on ort-cpu
RESAMPLED = Accuracy(256)

class ResizeOp(AbsOpBase, abstract=True):
    accuracy = EXACT
    family = "resize"
    in_dtypes = [(d,) for d in DTYPE_FLOATS]
    out_dtypes = [(d,) for d in DTYPE_FLOATS]
    num_var_param = [1, 2, 3]  # spatial dims: 3-D, 4-D or 5-D input
    inp_ranks = out_ranks = [ranks(3)]  # each instance: len(size) + 2

    def __init__(self, *size):
        self.size = list(size)
        self.inp_ranks = self.out_ranks = [(len(size) + 2,)]

    def requires(self, inputs):
        return [s >= 1 for s in self.size]

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(x.shape[:2] + self.size, self.out_dtypes_for(inputs)[0])]

    def output_sizes(self, in_sizes):
        """The concrete output spatial sizes for these input spatial sizes."""
        return [int(s) for s in self.size]


class ResizeNearest(ResizeOp):
    """Nearest neighbour, source index floor(i * in / out) (ONNX: asymmetric, floor).

    Output sizes are whole multiples of the input sizes: for other ratios the index i * in / out
    lands on whole numbers that torch (scale in/out) and ONNX runtimes (i / (out/in)) round to
    different sides in floating point, which is a known precision limit, not a finding.
    """
    in_dtypes = ResizeOp.in_dtypes + [(DType.uint8,)]
    out_dtypes = ResizeOp.out_dtypes + [(DType.uint8,)]

    def requires(self, inputs):
        (x,) = inputs
        return super().requires(inputs) + [divisible(s, d) for s, d in zip(self.size, x.shape[2:])]


class ResizeLinear(ResizeOp):
    """Linear / bilinear / trilinear by rank; half-pixel centres or ``align_corners``."""
    accuracy = RESAMPLED
    attr_choices = {"align_corners": (False, True)}

    def __init__(self, *size, align_corners):
        super().__init__(*size)
        self.align_corners = align_corners


class ResizeCubic(ResizeOp):
    """Bicubic (4-D only, cubic coefficient -0.75)."""
    accuracy = RESAMPLED
    num_var_param = [2]
    inp_ranks = out_ranks = [(4,)]
    attr_choices = {"align_corners": (False, True)}

    def __init__(self, *size, align_corners):
        super().__init__(*size)
        self.align_corners = align_corners


COORD_MODES = ("half_pixel", "asymmetric", "pytorch_half_pixel", "align_corners")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
ONNX_NEAREST_DTYPES = DTYPE_FLOATS + (DType.int8, DType.uint8, DType.int32, DType.int64)


class ResizeNearestOnnx(ResizeOp):
    """ONNX nearest: the source coordinate (``coord``) rounded by ``nearest_mode``, clamped into
    the input. Each output size is a multiple of its input size, or the input size is the output
    size times 2, 4 or 8: then every scale and source coordinate is exact in float32, so no runtime
    rounds a coordinate that lies on (or a hair from) a rounding boundary to the other side (for
    other ratios they do, a known precision limit rather than a finding)."""
    in_dtypes = [(d,) for d in ONNX_NEAREST_DTYPES]
    out_dtypes = [(d,) for d in ONNX_NEAREST_DTYPES]
    attr_choices = {"coord": COORD_MODES, "nearest_mode": NEAREST_MODES}

    def __init__(self, *size, coord, nearest_mode):
        super().__init__(*size)
        self.coord = coord
        self.nearest_mode = nearest_mode

    def requires(self, inputs):
        (x,) = inputs
        exact = [Or(divisible(s, d), d == 2 * s, d == 4 * s, d == 8 * s) for s, d in zip(self.size, x.shape[2:])]
        return super().requires(inputs) + exact


class ResizeLinearOnnx(ResizeOp):
    """ONNX linear (by rank: linear, bilinear, trilinear) with the coordinate modes torch lacks."""
    accuracy = RESAMPLED
    attr_choices = {"coord": ("asymmetric", "pytorch_half_pixel")}

    def __init__(self, *size, coord):
        super().__init__(*size)
        self.coord = coord


class ResizeCubicOnnx(ResizeOp):
    """ONNX cubic (4-D only) with any coordinate mode, Keys' coefficient ``cubic_coeff_a`` (-0.75 as
    torch, -0.5 as TensorFlow) and ``exclude_outside`` (taps outside the input get weight 0 and the
    rest are renormalized to sum 1, instead of reading the edge)."""
    accuracy = RESAMPLED
    num_var_param = [2]
    inp_ranks = out_ranks = [(4,)]
    attr_choices = {"coord": ("half_pixel", "asymmetric", "align_corners"), "cubic_coeff_a": (-0.5, -0.75),
                    "exclude_outside": (False, True)}

    def __init__(self, *size, coord, cubic_coeff_a, exclude_outside):
        super().__init__(*size)
        self.coord = coord
        self.cubic_coeff_a = cubic_coeff_a
        self.exclude_outside = exclude_outside


class ResizeLinearScale(AbsOpBase):
    """ONNX linear Resize by ``scale`` on every spatial dim (a Resize with a ``scales`` input): output
    floor(in * scale), source coordinates from ``scale`` (see the module docstring). The scales are
    exact binary fractions, so floor(in * scale) is exact in float32 everywhere; align_corners and
    pytorch_half_pixel are left out (runtimes read their "output length" as the integer size or as
    in * scale, which differ here).

    The coordinates use the given scale as onnx's ReferenceEvaluator and ONNX Runtime do (and as
    half_pixel_symmetric's definition needs), although the spec text also defines ``scale =
    length_resized / length_original``: a runtime that reads it so disagrees wherever
    floor(in * scale) / in != scale. Where floor(in * scale) == in the two readings give the identity
    and the given scale does not; ORT returns the identity there, so the rules rule that case out."""
    accuracy = RESAMPLED
    family = "resize"
    in_dtypes = [(d,) for d in DTYPE_FLOATS]
    out_dtypes = [(d,) for d in DTYPE_FLOATS]
    inp_ranks = out_ranks = [ranks(3, 5)]
    attr_choices = {"scale": (0.625, 0.75, 1.25, 1.75, 2.5), "coord": ("half_pixel_symmetric", "half_pixel", "asymmetric")}

    def __init__(self, *, scale, coord):
        self.scale = scale
        self.coord = coord

    def _sizes(self, in_sizes):
        f = Fraction(self.scale)
        return [fdiv(d * f.numerator, f.denominator) for d in in_sizes]

    def output_sizes(self, in_sizes):
        f = Fraction(self.scale)
        return [int(d) * f.numerator // f.denominator for d in in_sizes]

    def requires(self, inputs):
        ins = inputs[0].shape[2:]
        return [s >= 1 for s in self._sizes(ins)] + [s != d for s, d in zip(self._sizes(ins), ins)]

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(list(x.shape[:2]) + self._sizes(x.shape[2:]), self.out_dtypes_for(inputs)[0])]
