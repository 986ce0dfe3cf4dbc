"""torch lowerings of the activations with ONNX's parameters."""
import torch

from nnfuzz.materialize.torch.lowering import lowers
from nnfuzz.ops.activation import spec as A
from nnfuzz.ops.binary.torch import f64_scalar_safe


@lowers(A.PRelu)
def _prelu(op, x, slope):
    # F.prelu takes only a [C] or [1] slope; this is its formula for any broadcastable one
    return f64_scalar_safe(lambda v, s: torch.where(v > 0, v, v * s))(x, slope)


@lowers(A.HardSigmoidAlphaBeta)
def _hard_sigmoid(op, x):
    return f64_scalar_safe(lambda v: torch.clamp(v * op.alpha + op.beta, 0.0, 1.0))(x)


@lowers(A.ThresholdedRelu)
def _thresholded_relu(op, x):
    # F.threshold's formula; torch's exporter cannot write aten::threshold, where() it can; a 0-d zero,
    # not zeros_like (written as ConstantOfShape, which has no bfloat16 at opset 17)
    return f64_scalar_safe(lambda v: torch.where(v > op.alpha, v, torch.zeros((), dtype=v.dtype)))(x)


@lowers(A.Shrink)
def _shrink(op, x):
    # an integer x takes an integer bias (a float one would promote the result to float)
    bias = op.bias if x.is_floating_point() else int(op.bias)

    def shrink(v):
        return torch.where(v > op.lambd, v - bias, torch.where(v < -op.lambd, v + bias, torch.zeros_like(v)))

    return f64_scalar_safe(shrink)(x)
