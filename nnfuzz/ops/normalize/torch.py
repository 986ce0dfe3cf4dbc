"""torch lowerings of ReduceSumSquare, GlobalLpPool, LpNormalization and MeanVarianceNormalization."""
import torch

from nnfuzz.materialize.torch.lowering import lowers
from nnfuzz.ops.normalize import spec as M
from nnfuzz.ops.normalize.numpy import MVN_EPS


@lowers(M.ReduceSumSquare)
def _sum_square(op, x):
    return torch.sum(x * x, op.axis, keepdim=op.keepdims, dtype=x.dtype)  # torch would widen ints to int64


@lowers(M.GlobalLpPool)
def _global_lp_pool(op, x):
    return torch.linalg.vector_norm(x, op.p, dim=tuple(range(2, x.dim())), keepdim=True)


@lowers(M.LpNormalization)
def _lp_normalization(op, x):
    # F.normalize would divide by max(norm, eps): ONNX divides by the norm itself
    return x / torch.linalg.vector_norm(x, op.p, dim=op.axis, keepdim=True)


@lowers(M.MeanVarianceNormalization)
def _mvn(op, x):
    # ONNX's formula: the variance as mean(x^2) - mean^2, epsilon added to the deviation
    mean = torch.mean(x, op.axes, keepdim=True)
    var = torch.mean(x * x, op.axes, keepdim=True) - mean * mean
    return (x - mean) / (torch.sqrt(var) + MVN_EPS)
