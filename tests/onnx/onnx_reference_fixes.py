"""Corrections to onnx's ReferenceEvaluator (onnx 1.23) where it is wrong, for the tests that compare
ONNX models with it: pass ``new_ops=REFERENCE_FIXES``. Each says what the original gets wrong."""
import math

import numpy as np
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


REFERENCE_FIXES = [Erf, Softsign]
