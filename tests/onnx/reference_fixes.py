"""Corrections to onnx's ReferenceEvaluator (onnx 1.23.2) where it departs from the ONNX operator spec
on spellings the direct ONNX path writes. Pass ``new_ops=FIXED_OPS`` to ``ReferenceEvaluator``.

Each class brings the input to a form the stock implementation computes correctly and calls it;
each docstring says what the stock one gets wrong (a bug to report to onnx, not a difference of
opinion: the spec text is quoted or paraphrased).
"""
import numpy as np
from onnx.reference.ops.op_conv_transpose import ConvTranspose as _ConvTranspose
from onnx.reference.ops.op_global_max_pool import GlobalMaxPool as _GlobalMaxPool
from onnx.reference.ops.op_max_pool import MaxPool as _MaxPool
from onnx.reference.ops.op_resize import Resize as _Resize


class Resize(_Resize):
    """Spec: ``axes`` values may be negative ("counting dimensions from the back", range [-r, r-1]);
    the stock one compares them with non-negative dims and fails ("axes don't match array")."""
    op_domain = ""

    def _run(self, X, roi, scales=None, sizes=None, axes=None, **kwargs):
        if axes is not None:
            axes = [int(a) % X.ndim for a in axes]
        return super()._run(X, roi, scales, sizes, axes=axes, **kwargs)


class GlobalMaxPool(_GlobalMaxPool):
    """Spec: the max over all spatial dims, keeping them as 1; the stock one reduces axes 2..3 of
    the spatial count (right only for 4-D input)."""
    op_domain = ""

    def _run(self, x):
        return (x.max(axis=tuple(range(2, x.ndim)), keepdims=True),)


def _same_pads(auto_pad, sizes, kernel, strides, dilations):
    """Explicit pads that ``auto_pad=SAME_*`` means: output ceil(size / stride), the total padding
    split evenly, the odd one at the end (SAME_UPPER) or at the beginning (SAME_LOWER)."""
    begin, end = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        total = max(0, (-(-size // s) - 1) * s + d * (k - 1) + 1 - size)
        small, big = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else big)
        end.append(big if auto_pad == "SAME_UPPER" else small)
    return begin + end


class MaxPool(_MaxPool):
    """Spec: SAME_UPPER and SAME_LOWER both give output ceil(size / stride); with a stride or
    dilation other than 1 the stock one gives SAME_LOWER floor(size / stride) (0 for size < stride)."""
    op_domain = ""

    def _run(self, x, auto_pad=None, ceil_mode=None, dilations=None, kernel_shape=None, pads=None,
             storage_order=None, strides=None):
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            n = len(kernel_shape)
            pads = _same_pads(auto_pad, x.shape[2:], kernel_shape, strides or [1] * n, dilations or [1] * n)
            auto_pad = "NOTSET"
        return super()._run(x, auto_pad=auto_pad, ceil_mode=ceil_mode, dilations=dilations,
                            kernel_shape=kernel_shape, pads=pads, storage_order=storage_order, strides=strides)


class ConvTranspose(_ConvTranspose):
    """Spec: with ``group`` g, input channel group i (of C/g) feeds output channel group i through
    W[i*C/g:(i+1)*C/g]; the stock one slices W by output channels and fails to reshape (or mixes
    groups) whenever g > 1 and C/g or O/g is not 1. Computed here one group at a time."""
    op_domain = ""

    def _run(self, X, W, B=None, group=None, **kwargs):
        g = group or 1
        if g == 1:
            return super()._run(X, W, B, group=1, **kwargs)
        xs, ws = np.split(X, g, axis=1), np.split(W, g, axis=0)
        bs = np.split(B, g) if B is not None else [None] * g
        return (np.concatenate([super(ConvTranspose, self)._run(x, w, b, group=1, **kwargs)[0]
                                for x, w, b in zip(xs, ws, bs)], axis=1),)


FIXED_OPS = [Resize, GlobalMaxPool, MaxPool, ConvTranspose]
