import torch

from nnfuzz.abstract.ops import reduce as R
from nnfuzz.materialize.torch.lowering import lowers


@lowers(R.ReduceSum)
def _sum(op, x):
    return torch.sum(x, op.axis, keepdim=op.keepdims, dtype=x.dtype)  # torch would widen ints to int64


@lowers(R.ReduceProd)
def _prod(op, x):
    return torch.prod(x, op.axis, keepdim=op.keepdims, dtype=x.dtype)


@lowers(R.ReduceMean)
def _mean(op, x):
    return torch.mean(x, op.axis, keepdim=op.keepdims)


@lowers(R.ReduceMax)
def _max(op, x):
    return torch.amax(x, op.axis, keepdim=op.keepdims)


@lowers(R.ReduceMin)
def _min(op, x):
    return torch.amin(x, op.axis, keepdim=op.keepdims)


@lowers(R.ReduceL1)
def _l1(op, x):
    return torch.linalg.vector_norm(x, 1, dim=op.axis, keepdim=op.keepdims)


@lowers(R.ReduceL2)
def _l2(op, x):
    return torch.linalg.vector_norm(x, 2, dim=op.axis, keepdim=op.keepdims)


@lowers(R.LogSumExp)
def _logsumexp(op, x):
    return torch.logsumexp(x, op.axis, keepdim=op.keepdims)


@lowers(R.ArgMax)
def _argmax(op, x):
    return torch.argmax(x, op.axis, keepdim=op.keepdims)


@lowers(R.ArgMin)
def _argmin(op, x):
    return torch.argmin(x, op.axis, keepdim=op.keepdims)


@lowers(R.Softmax)
def _softmax(op, x):
    return torch.softmax(x, op.axis)


@lowers(R.LogSoftmax)
def _log_softmax(op, x):
    return torch.log_softmax(x, op.axis)


@lowers(R.CumSum)
def _cumsum(op, x):
    return torch.cumsum(x, op.axis, dtype=x.dtype)  # torch would widen int32 to int64
