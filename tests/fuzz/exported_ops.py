"""A test operator that reproduces a real ONNX Runtime disagreement on demand: torch's stable
logsigmoid, which the TorchScript exporter writes as Log(Sigmoid(x)); in float32 ORT's sigmoid
underflows to 0 for x < -88 and the log gives -inf where torch gives x. (nnfuzz's own LogSigmoid
lowering avoids this form.)"""
import numpy as np
import torch.nn.functional as F
from testops import SameShapeFloat32

from nnfuzz.abstract import OP_REGISTRY
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.materialize.torch.lowering import lowers
from nnfuzz.reference.registry import evaluates


class ExportedLogSigmoid(SameShapeFloat32):
    """torch's stable logsigmoid, which the TorchScript exporter writes as Log(Sigmoid(x))."""


@lowers(ExportedLogSigmoid)
def _exported_log_sigmoid(op, x):
    return F.logsigmoid(x)


@onnx_lowers(ExportedLogSigmoid)
def _exported_form(op, g, x):
    """The exporter's form, written directly: Log(Sigmoid(x))."""
    return g.op("Log", g.op("Sigmoid", x))


@evaluates(ExportedLogSigmoid)
def _exact_log_sigmoid(op, x):
    return -np.logaddexp(0.0, -x.astype(np.float64))


OP_REGISTRY.pop("ExportedLogSigmoid")
