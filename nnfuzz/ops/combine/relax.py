"""Relax lowerings of Concat, Split (a Tuple, one item per output), Slice (strided_slice) and Gather
(take with the indices as an int64 vector)."""
import itertools

from tvm import relax
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_lowers
from nnfuzz.ops.combine import spec as C


@relax_lowers(C.Concat)
def _concat(op, g, *xs):
    return R.concat(list(xs), op.axis)


@relax_lowers(C.Split)
def _split(op, g, x):
    cuts = list(itertools.accumulate(op.sizes))[:-1]
    parts = g.emit(R.split(x, cuts, op.axis))
    return [relax.TupleGetItem(parts, k) for k in range(len(op.sizes))]


@relax_lowers(C.Slice)
def _slice(op, g, x):
    return R.strided_slice(x, [op.axis], [op.start], [op.end], [op.step])


@relax_lowers(C.Gather)
def _gather(op, g, x):
    return R.take(x, g.index(op.indices), op.axis)
