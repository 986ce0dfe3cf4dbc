"""Corrections to onnx's ReferenceEvaluator (onnx 1.23.2) where it is wrong or lacks an operator, for the
tests that compare ONNX models with it: pass ``new_ops=REFERENCE_FIXES`` (they replace its own). Each is
written from the operator's spec and says what the original gets wrong; remove one once the installed
onnx gets it right:

- Erf computes float64 in float32; Softsign fails on a 0-d input;
- GlobalLpPool has no implementation (RuntimeImplementationError for every model holding one);
- LpNormalization with p=1 sums x instead of |x| (``np.power(x, p).sum(axis)``): [-1, 2] gives [-1, 2]
  instead of [-1/3, 2/3];
- ReduceSumSquare on int32 returns int64 (numpy's sum widens it); the schema says int32.
"""
import math

import numpy as np
from onnx.reference.op_run import OpRun
from onnx.reference.ops.op_erf import Erf as _OnnxErf
from onnx.reference.ops.op_softsign import Softsign as _OnnxSoftsign


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


REFERENCE_FIXES = [Erf, Softsign, GlobalLpPool, LpNormalization, ReduceSumSquare]
