"""Resize the spatial dims of an [N, C, *spatial] tensor (torch F.interpolate, ONNX Resize).

The output spatial ``size`` is given directly (one symbolic "size" attribute per spatial dim), so
any up- or down-scale occurs. One class per interpolation mode: the modes differ in the ranks they
accept (cubic is 2-D only) and in whether ``align_corners`` applies, which a single class with a
``mode`` choice could only express as rules that fail for some drawn attribute combinations.
"""
from nnfuzz.abstract.arith import divisible
from nnfuzz.abstract.dtype import DTYPE_FLOATS, DType
from nnfuzz.abstract.op import AbsOpBase, ranks
from nnfuzz.abstract.tensor import AbsTensor


class ResizeOp(AbsOpBase, abstract=True):
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
    attr_choices = {"align_corners": (False, True)}

    def __init__(self, *size, align_corners):
        super().__init__(*size)
        self.align_corners = align_corners


class ResizeCubic(ResizeOp):
    """Bicubic (4-D only, cubic coefficient -0.75)."""
    num_var_param = [2]
    inp_ranks = out_ranks = [(4,)]
    attr_choices = {"align_corners": (False, True)}

    def __init__(self, *size, align_corners):
        super().__init__(*size)
        self.align_corners = align_corners
