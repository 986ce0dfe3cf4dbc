"""Corrections to onnx's ReferenceEvaluator (onnx 1.23.2) where it is wrong or lacks an operator, for the
tests that compare ONNX models with it: pass ``new_ops=REFERENCE_FIXES`` (they replace its own). Each is
written from the operator's spec and says what the original gets wrong; remove one once the installed
onnx gets it right:

- Erf computes float64 in float32; Softsign fails on a 0-d input;
- GlobalLpPool has no implementation (RuntimeImplementationError for every model holding one);
- LpNormalization with p=1 sums x instead of |x| (``np.power(x, p).sum(axis)``): [-1, 2] gives [-1, 2]
  instead of [-1/3, 2/3];
- ReduceSumSquare on int32 returns int64 (numpy's sum widens it); the schema says int32;
- BatchNormalization of opsets 9-13 normalises an inference (one output) node with the batch's statistics;
- Resize with negative axes, GlobalMaxPool on 3-D/5-D input, MaxPool with SAME_LOWER and a stride or
  dilation other than 1, ConvTranspose with group > 1 (each class's docstring quotes the spec);
- GatherElements with a negative ``axis`` raises ValueError (it cuts shapes with the negative axis:
  "Except for dimension -1, all dimensions of index and self should be the same size"), and over 64
  entries along the axis raise ValueError in ``np.choose`` ("at most 64 array objects");
- LayerNormalization refuses ``stash_type`` other than 1 (nnfuzz writes DOUBLE for float64);
- OneHot with ``depth`` a rank-1 tensor of one element (the schema allows it) raises TypeError in
  ``np.arange(depth)``;
- QuantizeLinear and DequantizeLinear have implementations from opset 19 only (RuntimeError below it):
  the newest one serves every opset (its new attributes default to the older opsets' meaning).
"""
import math

import numpy as np
from onnx.reference.op_run import OpRun
from onnx.reference.ops.op_resize import Resize as _Resize
from onnx.reference.ops.op_max_pool import MaxPool as _MaxPool
from onnx.reference.ops.op_global_max_pool import GlobalMaxPool as _GlobalMaxPool
from onnx.reference.ops.op_conv_transpose import ConvTranspose as _ConvTranspose
from onnx.reference.ops.op_erf import Erf as _OnnxErf
from onnx.reference.ops.op_gather_elements import GatherElements as _OnnxGatherElements
from onnx.reference.ops.op_layer_normalization import LayerNormalization as _OnnxLayerNormalization
from onnx.reference.ops.op_one_hot import OneHot as _OnnxOneHot
from onnx.reference.ops.op_softsign import Softsign as _OnnxSoftsign
from onnx.reference.ops.op_dequantize_linear import DequantizeLinear_25 as _OnnxDequantizeLinear
from onnx.reference.ops.op_quantize_linear import QuantizeLinear_25 as _OnnxQuantizeLinear


class QuantizeLinear(_OnnxQuantizeLinear):
    """The opset-25 implementation at every opset (onnx 1.23 has none below 19)."""


class DequantizeLinear(_OnnxDequantizeLinear):
    """The opset-25 implementation at every opset (onnx 1.23 has none below 19)."""


class Erf(_OnnxErf):
    """onnx 1.23's Erf computes float64 in float32 (np.vectorize(erf, otypes=["f"])): 3e-7 off."""

    def _run(self, x):
        return (np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64)).astype(x.dtype),)


class Softsign(_OnnxSoftsign):
    """onnx 1.23's Softsign fails on a 0-d input (np.divide into the scalar np.abs returned)."""

    def _run(self, x):
        return ((x / (np.abs(x) + x.dtype.type(1))).astype(x.dtype),)


def _lp_norm(x, p, axes):
    s = np.sum(np.abs(x.astype(np.float64)) ** p, axis=axes, keepdims=True)
    return s if p == 1 else np.sqrt(s)


class GlobalLpPool(OpRun):
    op_domain = ""

    def _run(self, x, p=None):
        return (_lp_norm(x, p, tuple(range(2, x.ndim))).astype(x.dtype),)


class LpNormalization(OpRun):
    op_domain = ""

    def _run(self, x, axis=None, p=None):
        return ((x.astype(np.float64) / _lp_norm(x, p, axis)).astype(x.dtype),)


class ReduceSumSquare(OpRun):
    """Both forms: axes as an attribute (before opset 18) or as an input."""
    op_domain = ""

    def _run(self, x, axes=None, keepdims=None, noop_with_empty_axes=None):
        axes = getattr(self, "axes", None) if axes is None else axes
        if axes is None or len(axes) == 0:
            if noop_with_empty_axes:
                return (x,)
            axes = range(x.ndim)
        keep = 1 if keepdims is None else keepdims
        return (np.sum(x * x, axis=tuple(int(a) for a in axes), keepdims=bool(keep), dtype=x.dtype),)


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


class BatchNormalization(OpRun):
    """onnx 1.23's BatchNormalization_9 (opsets 9-13) uses the batch's statistics whenever ``momentum``
    is set, and the schema's default sets it. Spec: a node with one output is in inference mode,
    ``(x - mean) / sqrt(var + epsilon) * scale + B`` with the given running statistics (nnfuzz
    writes no training-mode node at any opset)."""
    op_domain = ""

    def _run(self, x, scale, bias, mean, var, epsilon=None, momentum=None, training_mode=None):
        per_channel = (-1,) + (1,) * (x.ndim - 2)
        s, b, m, v = (a.reshape(per_channel) for a in (scale, bias, mean, var))
        return (((x - m) / np.sqrt(v + epsilon) * s + b).astype(x.dtype),)


class GatherElements(_OnnxGatherElements):
    """Along the axis, made non-negative, entries counted from the end as ONNX reads them."""
    op_domain = ""

    def _run(self, data, indices, axis=None):
        axis = (axis or 0) % data.ndim
        return (np.take_along_axis(data, np.where(indices < 0, indices + data.shape[axis], indices), axis),)


class OneHot(_OnnxOneHot):
    """The original, on depth as a scalar."""
    op_domain = ""

    def _run(self, indices, depth, values, axis=None):
        return super()._run(indices, np.asarray(depth).reshape(()), values, axis=axis)


class LayerNormalization(_OnnxLayerNormalization):
    """Spec: ``stash_type`` is the type the mean and inverse standard deviation are computed in; the
    original raises NotImplementedError for any but FLOAT. It computes in X's dtype, which for a float64 X
    is what stash_type=DOUBLE asks (the only non-FLOAT stash nnfuzz writes)."""
    op_domain = ""

    def _run(self, X, Scale, B=None, axis=None, epsilon=None, stash_type=None):
        if stash_type not in (None, 1) and not (stash_type == 11 and X.dtype == np.float64):
            raise NotImplementedError(f"LayerNormalization stash_type={stash_type} on {X.dtype}")
        return super()._run(X, Scale, B, axis=axis, epsilon=epsilon, stash_type=1)


REFERENCE_FIXES = [Erf, Softsign, GlobalLpPool, LpNormalization, ReduceSumSquare, Resize, GlobalMaxPool, MaxPool,
                   ConvTranspose, BatchNormalization, GatherElements, OneHot, LayerNormalization, QuantizeLinear,
                   DequantizeLinear]
