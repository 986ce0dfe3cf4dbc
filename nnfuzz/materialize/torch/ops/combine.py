import torch

from nnfuzz.abstract.ops import combine as C
from nnfuzz.materialize.torch.lowering import lowers


@lowers(C.Concat)
def _concat(op, *xs):
    return torch.cat(xs, op.axis)


@lowers(C.Split)
def _split(op, x):
    # a size derived from x.shape still exports as one static ONNX Split (torch.chunk would not)
    return list(torch.split(x, x.shape[op.axis] // op.parts, op.axis))


@lowers(C.Slice)
def _slice(op, x):
    return x[(slice(None),) * op.axis + (slice(op.start, op.end, op.step),)]


@lowers(C.Gather)
def _gather(op, x):
    return torch.index_select(x, op.axis, torch.tensor(op.indices, dtype=torch.int64))
