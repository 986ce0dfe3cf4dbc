"""Implementations ONNX's ReferenceEvaluator (onnx 1.23.2) lacks or gets wrong, written from the operator
docs and passed to it as ``new_ops`` (which replace its own):

- GlobalLpPool: no implementation (RuntimeImplementationError for every model holding one).
- LpNormalization with p=1: it sums x instead of |x| (onnx/reference/ops/op_lp_normalization.py:
  ``np.power(x, p).sum(axis)``), e.g. [-1, 2] gives [-1, 2] instead of [-1/3, 2/3].
- ReduceSumSquare on int32: it returns int64 (numpy's sum widens it), the schema says int32.

Each is a few lines of the spec's formula; remove an entry once the installed onnx gets it right.
"""
import numpy as np
from onnx.reference.op_run import OpRun


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


FIXES = [GlobalLpPool, LpNormalization, ReduceSumSquare]
