"""Corrections to onnx's ReferenceEvaluator (onnx 1.23) where it is wrong, for the tests that compare
ONNX models with it: pass ``new_ops=REFERENCE_FIXES``. Each says what the original gets wrong."""
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


class BatchNormalization(OpRun):
    """onnx 1.23's BatchNormalization of opsets 9-13 (BatchNormalization_9) normalises with the batch's
    statistics whenever ``momentum`` is set, and the schema's default sets it, so an inference (one
    output) node is wrong there. Inference mode, as every opset defines it (nnfuzz writes no training)."""
    op_domain = ""

    def _run(self, x, scale, bias, mean, var, epsilon=None, momentum=None, training_mode=None):
        per_channel = (-1,) + (1,) * (x.ndim - 2)
        s, b, m, v = (a.reshape(per_channel) for a in (scale, bias, mean, var))
        return (((x - m) / np.sqrt(v + epsilon) * s + b).astype(x.dtype),)


REFERENCE_FIXES = [Erf, Softsign, BatchNormalization]
