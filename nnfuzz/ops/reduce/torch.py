import torch

from nnfuzz.ops.reduce import spec as R
from nnfuzz.materialize.torch.lowering import LOWERINGS, lowers

# reductions over op.axis honouring op.keepdims: torch function per op
_REDUCE = {
    R.ReduceMean: torch.mean,
    R.ReduceMax: torch.amax,
    R.ReduceMin: torch.amin,
    R.ReduceL1: lambda x, dim, keepdim: torch.linalg.vector_norm(x, 1, dim=dim, keepdim=keepdim),
    R.ReduceL2: lambda x, dim, keepdim: torch.linalg.vector_norm(x, 2, dim=dim, keepdim=keepdim),
    R.LogSumExp: torch.logsumexp,
    R.ArgMax: torch.argmax,
    R.ArgMin: torch.argmin,
}
for _cls, _fn in _REDUCE.items():
    LOWERINGS[_cls] = (lambda f: lambda op, x: f(x, op.axis, keepdim=op.keepdims))(_fn)


@lowers(R.ReduceSum)
def _sum(op, x):
    return torch.sum(x, op.axis, keepdim=op.keepdims, dtype=x.dtype)  # torch would widen ints to int64


@lowers(R.ReduceProd)
def _prod(op, x):
    return torch.prod(x, op.axis, keepdim=op.keepdims, dtype=x.dtype)


@lowers(R.Softmax)
def _softmax(op, x):
    return torch.softmax(x, op.axis)


@lowers(R.LogSoftmax)
def _log_softmax(op, x):
    return torch.log_softmax(x, op.axis)


@lowers(R.CumSum)
def _cumsum(op, x):
    return torch.cumsum(x, op.axis, dtype=x.dtype)  # torch would widen int32 to int64
