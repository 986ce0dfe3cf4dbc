"""Torch lowerings of the TF-only ops: the value search and the reference run on them. Each goes through
f64_scalar_safe like the binary ops (the ONNX exporter would cast 0-d float64 operands to float32)."""
import torch

from nnfuzz.ops.tfonly import spec as T
from nnfuzz.materialize.torch.lowering import lower_each
from nnfuzz.ops.binary.torch import f64_scalar_safe


def _squared_difference(x, y):
    d = x - y
    return d * d  # as TF: one rounding for the difference, one for the product


def _div_no_nan(x, y):
    # 0 where y == 0; the divisor there is replaced by 1 so that no inf/NaN reaches the gradient
    zero = y == 0
    return torch.where(zero, 0.0, x / torch.where(zero, 1.0, y))


lower_each({cls: f64_scalar_safe(fn) for cls, fn in {
    T.SquaredDifference: _squared_difference,
    T.FloorMod: torch.remainder,  # fmod, plus y where the signs differ (as TF, TFLite and np.mod)
    T.DivNoNan: _div_no_nan,
}.items()})
