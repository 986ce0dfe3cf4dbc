"""Convolutions over 1-3 spatial dims, batched layout ``[N, C, *spatial]``.

Conv:           x[N, C, *S], w[O, C/groups, *K] -> y[N, O, *S'] with, per spatial dim,
                S' = floor((S + 2*pad - dilation*(K-1) - 1) / stride) + 1.
ConvTranspose:  x[N, C, *S], w[C, O/groups, *K] -> y[N, O, *S'] with, per spatial dim,
                S' = (S-1)*stride - 2*pad + dilation*(K-1) + output_padding + 1,
                where 0 <= output_padding < stride. (torch also accepts output_padding < dilation,
                but ONNX Runtime and the ONNX reference evaluator reject output_padding >= stride.)

Stride, padding and dilation are symbolic and may differ per spatial dim (suffixes d/h/w);
the kernel size is the weight's spatial shape. Weight and input always have the same rank.
"""
from nnfuzz.abstract.accuracy import Accuracy
from nnfuzz.abstract import arith
from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.abstract.tensor import AbsTensor

# ONNX Conv/ConvTranspose take no bfloat16 at opset 17; torch has no integer convolution
CONV_DTYPES = (DType.float16, DType.float32, DType.float64)



def _pads(*names):
    return {n: "pad" for n in names}


MAX_SPREAD = 64  # the largest dilation, padding and stride drawn

class ConvBase(AbsOpBase, abstract=True):
    """Shared rules; subclasses declare their ranks and store ``stride``, ``padding``, ``dilation``
    (tuples, one entry per spatial dim) and ``groups``."""
    accuracy = Accuracy(4, 1.0, "kernel")
    family = "conv"

    in_dtypes = [(d, d) for d in CONV_DTYPES]
    out_dtypes = [(d,) for d in CONV_DTYPES]

    def _common_requires(self):
        return [
            self.groups >= 1,
            [s >= 1 for s in self.stride],
            [p >= 0 for p in self.padding],
            [d >= 1 for d in self.dilation],
            # bounds the shape rules leave open: a 1-wide kernel leaves the dilation out of every one (the
            # solver once drew 1.46e28 and torch overflowed: issue 26, item 7's campaigns), and a padding as
            # large as a stride as large keeps the output small while the kernel walks the padded input
            # (a torch conv1d ran for minutes in value-aware generation)
            [d <= MAX_SPREAD for d in self.dilation],
            [p <= MAX_SPREAD for p in self.padding],
            [s <= MAX_SPREAD for s in self.stride],
        ]


class ConvNd(ConvBase, abstract=True):
    qdq, qdq_weight = "compute", (1, 0)
    def requires(self, inputs):
        x, w = inputs
        n, c, *spatial = x.shape
        o, c_per_group, *kernel = w.shape
        preds = self._common_requires() + [c == c_per_group * self.groups, arith.divisible(o, self.groups)]
        for size, k, s, p, d in zip(spatial, kernel, self.stride, self.padding, self.dilation):
            preds.append(d * (k - 1) + 1 <= size + 2 * p)  # the dilated kernel fits the padded input
            if x.dtype is DType.float16:
                # torch's CPU float16 dilated convolution can segfault when a dilated dim is padded
                # (seen when some output window lies wholly in the padding): keep them apart
                preds.append(arith.Or(d == 1, p == 0))
        return preds

    def type_transfer(self, inputs):
        x, w = inputs
        out = [x.shape[0], w.shape[0]]
        for size, k, s, p, d in zip(x.shape[2:], w.shape[2:], self.stride, self.padding, self.dilation):
            out.append(arith.fdiv(size + 2 * p - d * (k - 1) - 1, s) + 1)
        return [AbsTensor(out, self.out_dtypes_for(inputs)[0])]


class Conv1d(ConvNd):
    inp_ranks = [(3,), (3,)]
    out_ranks = [(3,)]
    attr_kinds = _pads("pad_w")

    def __init__(self, stride_w, pad_w, dilation_w, groups):
        self.stride = (stride_w,)
        self.padding = (pad_w,)
        self.dilation = (dilation_w,)
        self.groups = groups


class Conv2d(ConvNd):
    inp_ranks = [(4,), (4,)]
    out_ranks = [(4,)]
    attr_kinds = _pads("pad_h", "pad_w")

    def __init__(self, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups):
        self.stride = (stride_h, stride_w)
        self.padding = (pad_h, pad_w)
        self.dilation = (dilation_h, dilation_w)
        self.groups = groups


class Conv3d(ConvNd):
    inp_ranks = [(5,), (5,)]
    out_ranks = [(5,)]
    attr_kinds = _pads("pad_d", "pad_h", "pad_w")

    def __init__(self, stride_d, stride_h, stride_w, pad_d, pad_h, pad_w,
                 dilation_d, dilation_h, dilation_w, groups):
        self.stride = (stride_d, stride_h, stride_w)
        self.padding = (pad_d, pad_h, pad_w)
        self.dilation = (dilation_d, dilation_h, dilation_w)
        self.groups = groups


class ConvTransposeNd(ConvBase, abstract=True):
    """Also stores ``output_padding`` (one entry per spatial dim)."""

    def requires(self, inputs):
        x, w = inputs
        c, c_w = x.shape[1], w.shape[0]
        preds = self._common_requires() + [c == c_w, arith.divisible(c, self.groups)]
        for op, s, d in zip(self.output_padding, self.stride, self.dilation):
            preds += [op >= 0, op < s]
        out = self.type_transfer(inputs)[0].shape[2:]
        preds += [size >= 1 for size in out]
        # each side's padding crops at most the kept length: systems that compute the whole (uncropped)
        # transposed conv and then crop it (TF's conv_transpose, VALID) otherwise do work unbounded by the
        # tensor size limit (pads 202/37/246 kept 4x1x1 of a 73M-element result: a timeout, no bug)
        preds += [p <= size for p, size in zip(self.padding, out)]
        if x.dtype is DType.float16:
            # as Conv's: torch's CPU float16 dilated convolution segfaults on a padded dilated dim, and a
            # transposed convolution's input gradient is one (the value search's backward killed producers:
            # ort-cpu soak, replayed from its record; conv_transpose2d, kernel 3x1, dilation 2, padding 1)
            preds += [arith.Or(d == 1, p == 0) for p, d in zip(self.padding, self.dilation)]
        return preds

    def type_transfer(self, inputs):
        x, w = inputs
        out = [x.shape[0], w.shape[1] * self.groups]
        for size, k, s, p, op, d in zip(x.shape[2:], w.shape[2:], self.stride, self.padding,
                                        self.output_padding, self.dilation):
            out.append((size - 1) * s - 2 * p + d * (k - 1) + op + 1)
        return [AbsTensor(out, self.out_dtypes_for(inputs)[0])]


class ConvTranspose1d(ConvTransposeNd):
    inp_ranks = [(3,), (3,)]
    out_ranks = [(3,)]
    attr_kinds = _pads("pad_w", "out_pad_w")

    def __init__(self, stride_w, pad_w, out_pad_w, dilation_w, groups):
        self.stride = (stride_w,)
        self.padding = (pad_w,)
        self.output_padding = (out_pad_w,)
        self.dilation = (dilation_w,)
        self.groups = groups


class ConvTranspose2d(ConvTransposeNd):
    inp_ranks = [(4,), (4,)]
    out_ranks = [(4,)]
    attr_kinds = _pads("pad_h", "pad_w", "out_pad_h", "out_pad_w")

    def __init__(self, stride_h, stride_w, pad_h, pad_w, out_pad_h, out_pad_w,
                 dilation_h, dilation_w, groups):
        self.stride = (stride_h, stride_w)
        self.padding = (pad_h, pad_w)
        self.output_padding = (out_pad_h, out_pad_w)
        self.dilation = (dilation_h, dilation_w)
        self.groups = groups


class ConvTranspose3d(ConvTransposeNd):
    inp_ranks = [(5,), (5,)]
    out_ranks = [(5,)]
    attr_kinds = _pads("pad_d", "pad_h", "pad_w", "out_pad_d", "out_pad_h", "out_pad_w")

    def __init__(self, stride_d, stride_h, stride_w, pad_d, pad_h, pad_w,
                 out_pad_d, out_pad_h, out_pad_w, dilation_d, dilation_h, dilation_w, groups):
        self.stride = (stride_d, stride_h, stride_w)
        self.padding = (pad_d, pad_h, pad_w)
        self.output_padding = (out_pad_d, out_pad_h, out_pad_w)
        self.dilation = (dilation_d, dilation_h, dilation_w)
        self.groups = groups
