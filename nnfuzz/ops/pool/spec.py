"""Pooling over 1-3 spatial dims, batched layout ``[N, C, *spatial]`` (ceil_mode off).

MaxPool / AvgPool: per spatial dim (suffixes d/h/w), with the kernel, stride, padding (and for
MaxPool dilation) as symbolic attributes,
    S' = floor((S + 2*pad - dilation*(kernel-1) - 1) / stride) + 1,
and torch's limit ``pad <= kernel / 2`` (floor), i.e. ``2 * pad <= kernel``. A dilated MaxPool
is unpadded, so that every window sees at least one input element.
GlobalAvgPool / GlobalMaxPool: every spatial dim becomes 1.
AdaptiveAvgPool2d / AdaptiveMaxPool2d: the two spatial dims become (out_h, out_w); the ONNX
exporter needs each input size to be a multiple of the output size (it lowers to a fixed pool).

Most rows are float16/32/64 only: ONNX pools take no bfloat16 and torch has no integer avg-pool.
"""
from nnfuzz.abstract.accuracy import Accuracy, EXACT
from nnfuzz.abstract import arith
from nnfuzz.abstract.dtype import DType, DTYPE_FLOATS
from nnfuzz.abstract.kink import Kink
from nnfuzz.abstract.op import AbsOpBase, ranks
from nnfuzz.abstract.tensor import AbsTensor

POOL_DTYPES = (DType.float16, DType.float32, DType.float64)
# torch has integer max-pool kernels for 2-D/3-D only; ONNX MaxPool takes int8/uint8 only
MAX_POOL_DTYPES = POOL_DTYPES + (DType.int8, DType.uint8)
# ONNX ReduceMax, unlike the pools, also takes bfloat16 and most integers
REDUCE_MAX_DTYPES = DTYPE_FLOATS + (DType.int8, DType.uint8, DType.int32, DType.int64)



def _pads(*names):
    return {n: "pad" for n in names}


WINDOW_MAX = Kink(ranked="window")  # the gradient goes to each window's largest value


class PoolBase(AbsOpBase, abstract=True):
    """Subclasses store ``kernel``, ``stride``, ``padding`` and ``dilation`` tuples (one entry per
    spatial dim) and declare their rank."""
    accuracy = EXACT
    family = "pool"

    in_dtypes = [(d,) for d in POOL_DTYPES]
    out_dtypes = [(d,) for d in POOL_DTYPES]

    def requires(self, inputs):
        (x,) = inputs
        preds = []
        for size, k, s, p, d in zip(x.shape[2:], self.kernel, self.stride, self.padding, self.dilation):
            preds += [k >= 1, s >= 1, d >= 1, p >= 0, 2 * p <= k, d * (k - 1) + 1 <= size + 2 * p]
            # no window may lie wholly in the padding (torch's max gives -inf there, ORT's -FLT_MAX)
            preds.append(arith.Or(d == 1, p == 0))
        return preds

    def type_transfer(self, inputs):
        (x,) = inputs
        out = list(x.shape[:2])
        for size, k, s, p, d in zip(x.shape[2:], self.kernel, self.stride, self.padding, self.dilation):
            out.append(arith.fdiv(size + 2 * p - d * (k - 1) - 1, s) + 1)
        return [AbsTensor(out, self.out_dtypes_for(inputs)[0])]


class MaxPool1d(PoolBase):
    qdq = "same"
    kinks = {0: WINDOW_MAX}
    inp_ranks = [(3,)]
    out_ranks = [(3,)]
    attr_kinds = _pads("pad_w")

    def __init__(self, kernel_w, stride_w, pad_w, dilation_w):
        self.kernel = (kernel_w,)
        self.stride = (stride_w,)
        self.padding = (pad_w,)
        self.dilation = (dilation_w,)


class MaxPool2d(PoolBase):
    qdq = "same"
    kinks = {0: WINDOW_MAX}
    in_dtypes = [(d,) for d in MAX_POOL_DTYPES]
    out_dtypes = [(d,) for d in MAX_POOL_DTYPES]
    inp_ranks = [(4,)]
    out_ranks = [(4,)]
    attr_kinds = _pads("pad_h", "pad_w")

    def __init__(self, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w):
        self.kernel = (kernel_h, kernel_w)
        self.stride = (stride_h, stride_w)
        self.padding = (pad_h, pad_w)
        self.dilation = (dilation_h, dilation_w)


class MaxPool3d(PoolBase):
    qdq = "same"
    kinks = {0: WINDOW_MAX}
    in_dtypes = [(d,) for d in MAX_POOL_DTYPES]
    out_dtypes = [(d,) for d in MAX_POOL_DTYPES]
    inp_ranks = [(5,)]
    out_ranks = [(5,)]
    attr_kinds = _pads("pad_d", "pad_h", "pad_w")

    def __init__(self, kernel_d, kernel_h, kernel_w, stride_d, stride_h, stride_w,
                 pad_d, pad_h, pad_w, dilation_d, dilation_h, dilation_w):
        self.kernel = (kernel_d, kernel_h, kernel_w)
        self.stride = (stride_d, stride_h, stride_w)
        self.padding = (pad_d, pad_h, pad_w)
        self.dilation = (dilation_d, dilation_h, dilation_w)


class AvgPoolBase(PoolBase, abstract=True):
    """No dilation (it is 1); ``count_include_pad`` picks whether padding counts in the mean."""
    qdq = "compute"
    accuracy = Accuracy(4, 1.0, "spatial")

    attr_choices = {"count_include_pad": (True, False)}


class AvgPool1d(AvgPoolBase):
    inp_ranks = [(3,)]
    out_ranks = [(3,)]
    attr_kinds = _pads("pad_w")

    def __init__(self, kernel_w, stride_w, pad_w, *, count_include_pad):
        self.kernel = (kernel_w,)
        self.stride = (stride_w,)
        self.padding = (pad_w,)
        self.dilation = (1,)
        self.count_include_pad = count_include_pad


class AvgPool2d(AvgPoolBase):
    inp_ranks = [(4,)]
    out_ranks = [(4,)]
    attr_kinds = _pads("pad_h", "pad_w")

    def __init__(self, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, *, count_include_pad):
        self.kernel = (kernel_h, kernel_w)
        self.stride = (stride_h, stride_w)
        self.padding = (pad_h, pad_w)
        self.dilation = (1, 1)
        self.count_include_pad = count_include_pad


class AvgPool3d(AvgPoolBase):
    in_dtypes = [(DType.float32,), (DType.float64,)]  # torch CPU has no half-precision avg_pool3d
    out_dtypes = [(DType.float32,), (DType.float64,)]
    inp_ranks = [(5,)]
    out_ranks = [(5,)]
    attr_kinds = _pads("pad_d", "pad_h", "pad_w")

    def requires(self, inputs):
        # torch's avg_pool3d (unlike the 1-D/2-D ones) wants the unpadded input to hold a kernel
        return super().requires(inputs) + [size >= k for size, k in zip(inputs[0].shape[2:], self.kernel)]

    def __init__(self, kernel_d, kernel_h, kernel_w, stride_d, stride_h, stride_w,
                 pad_d, pad_h, pad_w, *, count_include_pad):
        self.kernel = (kernel_d, kernel_h, kernel_w)
        self.stride = (stride_d, stride_h, stride_w)
        self.padding = (pad_d, pad_h, pad_w)
        self.dilation = (1, 1, 1)
        self.count_include_pad = count_include_pad


class GlobalPoolBase(AbsOpBase, abstract=True):
    """x[N, C, *S] -> [N, C, 1, ...]."""
    accuracy = Accuracy(4, 1.0, "spatial")
    family = "pool"

    in_dtypes = [(d,) for d in POOL_DTYPES]
    out_dtypes = [(d,) for d in POOL_DTYPES]
    inp_ranks = [ranks(3, 5)]
    out_ranks = [ranks(3, 5)]

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(list(x.shape[:2]) + [1] * (x.ndims - 2), self.out_dtypes_for(inputs)[0])]


class GlobalAvgPool(GlobalPoolBase):
    """ONNX GlobalAveragePool."""
    qdq = "compute"


class GlobalMaxPool(GlobalPoolBase):
    """A keepdim max over the spatial dims (ONNX ReduceMax)."""
    qdq = "same"
    accuracy = EXACT
    kinks = {0: Kink(ranked="spatial")}

    in_dtypes = [(d,) for d in REDUCE_MAX_DTYPES]
    out_dtypes = [(d,) for d in REDUCE_MAX_DTYPES]


class AdaptivePool2dBase(AbsOpBase, abstract=True):
    """x[N, C, H, W] -> [N, C, out_h, out_w] with H % out_h == 0 and W % out_w == 0."""
    accuracy = Accuracy(4, 1.0, "spatial")
    family = "pool"

    in_dtypes = [(d,) for d in POOL_DTYPES]
    out_dtypes = [(d,) for d in POOL_DTYPES]
    inp_ranks = [(4,)]
    out_ranks = [(4,)]

    def __init__(self, out_h, out_w):
        self.out_h = out_h
        self.out_w = out_w

    def requires(self, inputs):
        (x,) = inputs
        h, w = x.shape[2:]
        return [arith.divisible(h, self.out_h), arith.divisible(w, self.out_w)]

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(list(x.shape[:2]) + [self.out_h, self.out_w], self.out_dtypes_for(inputs)[0])]


class AdaptiveAvgPool2d(AdaptivePool2dBase):
    pass


class AdaptiveMaxPool2d(AdaptivePool2dBase):
    accuracy = EXACT
    kinks = {0: WINDOW_MAX}
