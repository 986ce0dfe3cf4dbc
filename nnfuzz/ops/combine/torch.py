import torch

from nnfuzz.ops.combine import spec as C
from nnfuzz.materialize.torch.lowering import lowers


@lowers(C.Concat)
def _concat(op, *xs):
    return torch.cat(xs, op.axis)


@lowers(C.Split)
def _split(op, x):
    return list(torch.split(x, op.sizes, op.axis))


@lowers(C.Slice)
def _slice(op, x):
    return x[(slice(None),) * op.axis + (slice(op.start, op.end, op.step),)]


@lowers(C.Gather)
def _gather(op, x):
    # on x's device: traced by dynamo, a CPU index next to a CUDA x is a device mismatch (inductor-gpu)
    return torch.index_select(x, op.axis, torch.tensor(op.indices, dtype=torch.int64, device=x.device))
