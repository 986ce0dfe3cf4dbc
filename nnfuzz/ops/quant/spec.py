"""Quantization ops (ONNX semantics). Scales and zero points are attributes of the op (the lowerings
write them as constants), so a graph's quantization parameters are fixed when it is generated:

QuantizeLinear:        q = saturate(round_half_even(x / scale) + zero_point)   float32 -> int8 | uint8 | QTYPES
                       (to float8: x / scale rounded to the nearest float8, half to even; ``saturate`` clamps
                       to the largest finite value, else an overflow is NaN (e4m3fn) or +-inf (e5m2))
DequantizeLinear:      x = (q - zero_point) * scale                              QTYPES | int32 -> float32
DynamicQuantizeLinear: scale = (max(0, max x) - min(0, min x)) / 255, zp = saturate(round(-min(0, min x) / scale)),
                       y = saturate(round(x / scale) + zp)                       float32 -> (uint8, scale, zp)
MatMulInteger:         (a - a_zp) @ (b - b_zp) in int32                          (u)int8 x (u)int8 -> int32
ConvInteger:           conv(x - x_zp, w - w_zp) in int32, no bias                (u)int8 x (u)int8 -> int32
QLinearMatMul:         quantize((a - a_zp) @ (b - b_zp) * a_scale * b_scale / y_scale, y_zp)
QLinearConv:           quantize(conv(x - x_zp, w) * x_scale * w_scale / y_scale, y_zp); symmetric weights
                       (zero point 0) as quantization tools write them, w_scale per tensor or per channel

``scale`` is one float (per tensor) or, with ``axis`` set, per slice along that axis: a tuple of floats
(as the QDQ pass writes calibrated ones) or one float spread over the slices by ``per_axis_scales``. With
``block_size`` B as well (blocked quantization, opset 21+), one scale per block of B consecutive elements
along ``axis`` (the last block may be shorter) and per index of every other axis: a scale tensor of the
input's shape with ceil(D / B) along ``axis``: one float spread over it, or a tuple of its values in C order
(``scale_tensor``).
Every scale is used as the float32 it rounds to.

Accuracy: a kernel may be one quantization step off where the real-valued result lies within rounding
of a tie (x / scale computed in float32, a requantization multiplier folded into fixed point): ``steps=1``
on every op that rounds to an integer grid. The dequantize and the integer kernels are exact.
"""
from nnfuzz.abstract.accuracy import EXACT, ROUNDED, Accuracy
from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase, ranks
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError
from nnfuzz.ops.conv.spec import ConvNd
from nnfuzz.ops.linear.spec import MATMUL_MAX_RANK, _matmul_rule

F32, I8, U8, I16, I32 = DType.float32, DType.int8, DType.uint8, DType.int16, DType.int32
# QuantizeLinear's outputs: int16, uint16, int4 and uint4 from opset 21, float8 from opset 19 (the ONNX
# writer moves a model to the first opset whose schema takes the type); all but int8, uint8 and int16 are
# quantized-tensor types (DType.quant_only) that only flow from a QuantizeLinear to a DequantizeLinear
QTYPES = (I8, U8, I16, DType.uint16, DType.int4, DType.uint4, DType.float8_e4m3fn, DType.float8_e5m2)
KERNEL_TYPES = (U8, I8)         # the integer kernels' operands
QRANGE = {I8: (-128, 127), U8: (0, 255), I16: (-32768, 32767), I32: (-2 ** 31, 2 ** 31 - 1),
          DType.uint16: (0, 65535), DType.int4: (-8, 7), DType.uint4: (0, 15)}
# float8: the largest finite value, and the magnitude from which a cast without saturation overflows
# (round half to even: 464 rounds down to 448 in e4m3fn, 61440 up to inf in e5m2)
F8_MAX = {DType.float8_e4m3fn: 448.0, DType.float8_e5m2: 57344.0}
F8_OVERFLOW = {DType.float8_e4m3fn: (464.0, False), DType.float8_e5m2: (61440.0, True)}  # (bound, inclusive)
SCALES = (2.0 ** -7, 2.0 ** -5, 0.05, 0.1, 0.25)
ZERO_POINTS = (0, 3, 100, 128, -20)
KERNEL_ZERO_POINTS = (0, 3, 100, 127)  # valid for int8 and uint8 alike: the integer kernels take either
ONE_STEP = Accuracy(0, steps=1)
BLOCK_SIZES = (None,) * 5 + (2, 3, 16)  # blocked quantization (opset 21+): 3 in 8 of the draws with an axis


def in_range(zp, dtype: DType) -> bool:
    """Whether ``zp`` is a zero point of ``dtype`` (float8: only 0, as the spec's reference uses none)."""
    if dtype.is_float8:
        return int(zp) == 0
    lo, hi = QRANGE[dtype]
    return lo <= int(zp) <= hi


def per_axis_scales(scale, n: int):
    """The ``n`` per-slice scales of ``scale``: a tuple as it is; one float spread as scale, 1.5x, 2x,
    repeated (the slices' ranges differ, as calibration finds them)."""
    if isinstance(scale, (tuple, list)):
        return [float(s) for s in scale]
    return [float(scale) * (1.0 + 0.5 * (i % 3)) for i in range(n)]


def scale_tensor(scale, axis, block_size, shape):
    """The scale input as ONNX takes it, ``(flat values, shape)``: a scalar per tensor, one per slice along
    ``axis``, or, with ``block_size``, one per block: ``shape`` with ceil(D / block_size) along ``axis``."""
    if axis is None:
        return [float(scale)], []
    if block_size is None:
        return per_axis_scales(scale, int(shape[axis])), [int(shape[axis])]
    grid = [int(d) for d in shape]
    grid[axis] = -(-grid[axis] // block_size)
    n = 1
    for d in grid:
        n *= d
    return per_axis_scales(scale, n), grid


class QuantOp(AbsOpBase, abstract=True):
    family = "quant"


class _PerAxis(QuantOp, abstract=True):
    """Shared rules of QuantizeLinear and DequantizeLinear: ``axis`` None (per tensor) or the axis the
    scales run along, within the rank; an explicit tuple of scales matches that axis' length; a
    ``block_size`` needs an axis, and an explicit tuple holds one scale per block."""
    def _axis_requires(self, x):
        if self.block_size is not None:
            if self.axis is None or not 0 <= self.axis < x.ndims:
                return [False]
            if not isinstance(self.scale, (tuple, list)):
                return []
            n = 1  # an explicit tuple: one scale per block (the QDQ pass calibrates each)
            for k, d in enumerate(x.shape):
                n = n * ((d + self.block_size - 1) // self.block_size if k == self.axis else d)
            return [n == len(self.scale)]
        if self.axis is None:
            return [not isinstance(self.scale, (tuple, list))]
        if not 0 <= self.axis < x.ndims:
            return [False]
        if isinstance(self.scale, (tuple, list)):
            return [x.shape[self.axis] == len(self.scale)]
        return []

    def largest_scale(self) -> float:
        """The largest of its scales (a spread float reaches twice itself: ``per_axis_scales``)."""
        return max(per_axis_scales(self.scale, 3)) if self.axis is not None else float(self.scale)

    def static_dims(self, inputs):
        """The input dims its scale tensor is sized by, static in a dynamic graph (generate/dynamic.py):
        the axis of per-axis scales, every dim of blocked ones."""
        if self.axis is None:
            return []
        return [(0, a) for a in range(inputs[0].ndims)] if self.block_size is not None else [(0, self.axis)]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        rank = outputs[0].ndims
        if self.axis is not None and rank <= self.axis:
            raise ConstraintError(f"{self.name} along axis {self.axis} cannot take rank {rank}")
        return [(rank, self.in_dtypes[0][0])]


class QuantizeLinear(_PerAxis):
    accuracy = ONE_STEP
    in_dtypes = [(F32,) for _ in QTYPES]
    out_dtypes = [(q,) for q in QTYPES]
    attr_choices = {"to": QTYPES, "scale": SCALES, "zero_point": ZERO_POINTS, "axis": (None, None, 0, 1),
                    "saturate": (True, False), "block_size": BLOCK_SIZES}

    def __init__(self, *, to, scale, zero_point, axis, saturate=True, block_size=None):
        self.to, self.scale, self.zero_point, self.axis, self.block_size = to, scale, zero_point, axis, block_size
        self.saturate = bool(saturate) or not to.is_float8  # the attribute exists for float8 only: recorded
        object.__setattr__(self, "_kwargs", {**self._kwargs, "saturate": self.saturate})  # as used (gir.json)
        self.in_dtypes, self.out_dtypes = [(F32,)], [(to,)]

    def closing(self):
        """The DequantizeLinear that reads a quantized-tensor type back (DType.quant_only): the generator
        adds it right after this op, with this op's scale and zero point (docs/quantization.md)."""
        return DequantizeLinear(scale=self.scale, zero_point=self.zero_point, axis=self.axis,
                                block_size=self.block_size)

    def requires(self, inputs):
        (x,) = inputs
        return [in_range(self.zero_point, self.to)] + self._axis_requires(x)

    def input_allowance(self) -> float:
        """How far the float value it quantizes may be off (absolute): ``accuracy.steps`` of its largest
        scale. A system may compute the op before a Q on the integer grid (OpenVINO moves the dequantize
        past a Clip and rounds its bounds to the grid); the Q's result is then at most that many steps off."""
        return self.accuracy.steps * self.largest_scale()

    def type_transfer(self, inputs):
        return [AbsTensor(inputs[0].shape, self.to)]


class DequantizeLinear(_PerAxis):
    """int32 input (a bias quantized with scale x_scale * w_scale) takes zero point 0."""
    accuracy = ROUNDED  # one float32 product
    in_dtypes = [(q,) for q in QTYPES + (I32,)]
    out_dtypes = [(F32,) for _ in QTYPES + (I32,)]
    attr_choices = {"scale": SCALES, "zero_point": ZERO_POINTS, "axis": (None, None, 0, 1), "block_size": BLOCK_SIZES}

    def __init__(self, *, scale, zero_point, axis, block_size=None):
        self.scale, self.zero_point, self.axis, self.block_size = scale, zero_point, axis, block_size

    def requires(self, inputs):
        (q,) = inputs
        ok = int(self.zero_point) == 0 if q.dtype is I32 else in_range(self.zero_point, q.dtype)
        return [ok] + self._axis_requires(q)

    def type_transfer(self, inputs):
        return [AbsTensor(inputs[0].shape, F32)]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        rank = outputs[0].ndims
        if self.axis is not None and rank <= self.axis:
            raise ConstraintError(f"{self.name} along axis {self.axis} cannot take rank {rank}")
        dts = [q for q in QTYPES if in_range(self.zero_point, q) and not q.quant_only]  # a new input: no
        # quantized-tensor type (those come from a QuantizeLinear)
        return [(rank, dts[rng.randrange(len(dts))] if rng is not None else dts[0])]


class DynamicQuantizeLinear(QuantOp):
    """Outputs: y (uint8, x's shape), y_scale (float32 scalar), y_zero_point (uint8 scalar). An input of
    zeros only has scale 0, and y = x / 0 is undefined (ONNX Runtime answers scale 1): the references
    give a NaN scale there, which makes the test's expected outputs undefined (no verdict). y_scale is a
    division the spec writes, which a system may round once more (a multiplication by 1/255): 1 ulp (an
    openvino-cpu campaign blamed DynamicQuantizeLinear's 1-ulp scale for three other ops' faults)."""
    accuracy = Accuracy(1, steps=1)
    in_dtypes = [(F32,)]
    out_dtypes = [(U8, F32, U8)]
    inp_ranks = [ranks(1)]
    out_ranks = [ranks(1), (0,), (0,)]

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(x.shape, U8), AbsTensor([], F32), AbsTensor([], U8)]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        return [(outputs[0].ndims, F32)]


def _kernel_rows(out):
    pairs = [(U8, U8), (U8, I8), (I8, I8)]
    return pairs, [((a if out is None else out),) for a, _ in pairs]


def _rows_to(cls, to):
    """The instance's dtype rows: those of ``cls`` whose output is ``to`` (the QLinear ops' output type
    follows their first operand; naming it keeps it known where the float64 twin widens integers)."""
    keep = [i for i, o in enumerate(cls.out_dtypes) if o == (to,)]
    return [cls.in_dtypes[i] for i in keep], [cls.out_dtypes[i] for i in keep]


class _IntegerMatMul(QuantOp, abstract=True):
    inp_ranks = [ranks(1, MATMUL_MAX_RANK), ranks(1, MATMUL_MAX_RANK)]
    out_ranks = [ranks(0, MATMUL_MAX_RANK)]

    def _zp_requires(self, a, b):
        return [in_range(self.a_zero_point, a.dtype), in_range(self.b_zero_point, b.dtype)]

    def _out_shape(self, a, b):
        return _matmul_rule(a.shape, b.shape)[1]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        r = outputs[0].ndims
        rows = [self.in_dtypes[i] for i, o in enumerate(self.out_dtypes) if o == (outputs[0].dtype,)]
        if not rows or r < 1:
            raise ConstraintError(f"{self.name} cannot produce {outputs[0]}")
        row = rows[rng.randrange(len(rows))] if rng is not None else rows[0]
        return [(r, row[0]), (min(max(r, 2), MATMUL_MAX_RANK), row[1])]


class MatMulInteger(_IntegerMatMul):
    accuracy = EXACT
    in_dtypes, out_dtypes = _kernel_rows(I32)
    attr_choices = {"a_zero_point": KERNEL_ZERO_POINTS, "b_zero_point": KERNEL_ZERO_POINTS}

    def __init__(self, *, a_zero_point, b_zero_point):
        self.a_zero_point, self.b_zero_point = a_zero_point, b_zero_point

    def requires(self, inputs):
        a, b = inputs
        return self._zp_requires(a, b) + _matmul_rule(a.shape, b.shape)[0]

    def type_transfer(self, inputs):
        a, b = inputs
        return [AbsTensor(self._out_shape(a, b), I32)]


class QLinearMatMul(_IntegerMatMul):
    """Operands of rank 2 or more (ONNX Runtime takes no 1-D operand here)."""
    accuracy = ONE_STEP
    in_dtypes, out_dtypes = _kernel_rows(None)
    inp_ranks = [ranks(2, MATMUL_MAX_RANK), ranks(2, MATMUL_MAX_RANK)]
    out_ranks = [ranks(2, MATMUL_MAX_RANK)]
    attr_choices = {"to": KERNEL_TYPES, "a_scale": SCALES, "a_zero_point": KERNEL_ZERO_POINTS, "b_scale": SCALES,
                    "b_zero_point": KERNEL_ZERO_POINTS, "y_scale": SCALES, "y_zero_point": KERNEL_ZERO_POINTS}

    def __init__(self, *, to, a_scale, a_zero_point, b_scale, b_zero_point, y_scale, y_zero_point):
        self.to = to
        self.in_dtypes, self.out_dtypes = _rows_to(QLinearMatMul, to)
        self.a_scale, self.a_zero_point, self.b_scale, self.b_zero_point = a_scale, a_zero_point, b_scale, b_zero_point
        self.y_scale, self.y_zero_point = y_scale, y_zero_point

    def requires(self, inputs):
        a, b = inputs
        return self._zp_requires(a, b) + [in_range(self.y_zero_point, self.to)] + _matmul_rule(a.shape, b.shape)[0]

    def type_transfer(self, inputs):
        a, b = inputs
        return [AbsTensor(self._out_shape(a, b), self.to)]


class _IntegerConv2d(ConvNd, abstract=True):
    """2-d convolutions over integers, the conv family's shape rules (``[N, C, H, W]`` by ``[O, C/g, KH, KW]``)."""
    family = "quant"
    inp_ranks = [(4,), (4,)]
    out_ranks = [(4,)]
    attr_kinds = {"pad_h": "pad", "pad_w": "pad"}
    weight_inputs = (1,)

    def _set(self, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups):
        self.stride, self.padding = (stride_h, stride_w), (pad_h, pad_w)
        self.dilation, self.groups = (dilation_h, dilation_w), groups

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        rows = [self.in_dtypes[i] for i, o in enumerate(self.out_dtypes) if o == (outputs[0].dtype,)]
        if not rows:
            raise ConstraintError(f"{self.name} cannot produce {outputs[0]}")
        row = rows[rng.randrange(len(rows))] if rng is not None else rows[0]
        return [(4, row[0]), (4, row[1])]


class ConvInteger(_IntegerConv2d):
    accuracy = EXACT
    in_dtypes, out_dtypes = _kernel_rows(I32)
    attr_choices = {"x_zero_point": KERNEL_ZERO_POINTS, "w_zero_point": KERNEL_ZERO_POINTS}

    def __init__(self, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups, *, x_zero_point,
                 w_zero_point):
        self._set(stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups)
        self.x_zero_point, self.w_zero_point = x_zero_point, w_zero_point

    def requires(self, inputs):
        x, w = inputs
        return super().requires(inputs) + [in_range(self.x_zero_point, x.dtype), in_range(self.w_zero_point, w.dtype)]


class QLinearConv(_IntegerConv2d):
    accuracy = ONE_STEP
    in_dtypes, out_dtypes = _kernel_rows(None)
    attr_choices = {"to": KERNEL_TYPES, "x_scale": SCALES, "x_zero_point": KERNEL_ZERO_POINTS, "w_scale": SCALES,
                    "per_channel": (False, True), "y_scale": SCALES, "y_zero_point": KERNEL_ZERO_POINTS}

    def __init__(self, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups, *, to, x_scale,
                 x_zero_point, w_scale, per_channel, y_scale, y_zero_point):
        self.to = to
        self.in_dtypes, self.out_dtypes = _rows_to(QLinearConv, to)
        self._set(stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups)
        self.x_scale, self.x_zero_point, self.w_scale, self.per_channel = x_scale, x_zero_point, w_scale, per_channel
        self.y_scale, self.y_zero_point = y_scale, y_zero_point

    def requires(self, inputs):
        x, w = inputs
        return super().requires(inputs) + [in_range(self.x_zero_point, x.dtype),
                                           in_range(self.y_zero_point, self.to)]

    def w_scales(self, out_channels: int):
        """The weight scale of each output channel."""
        return per_axis_scales(self.w_scale, out_channels) if self.per_channel else [float(self.w_scale)] * out_channels
