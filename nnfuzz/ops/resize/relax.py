"""Relax lowerings of the nearest resizes: one ``take`` per spatial axis with the reference's source
indices (``numpy.py``), exact in any dtype. The interpolating resizes have none: their tap weights would
be float tensor constants, which a module's TVMScript cannot hold in TVM 0.27 (see
materialize/relax/lowering.py), so their graphs go to TVM as ONNX."""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_lowers
from nnfuzz.ops.resize import spec as Rs
from nnfuzz.ops.resize.numpy import taps_for


@relax_lowers(Rs.ResizeNearest)
def _nearest(op, g, x):
    for axis, n_out in enumerate(op.size, start=2):
        n_in = g.shape(x)[axis]
        x = g.emit(R.take(x, g.index([i * n_in // n_out for i in range(n_out)]), axis))
    return x


@relax_lowers(Rs.ResizeNearestOnnx)
def _nearest_onnx(op, g, x):
    taps = taps_for(op)
    for axis, n_out in enumerate(op.size, start=2):
        (index,), _ = taps(g.shape(x)[axis], n_out)
        x = g.emit(R.take(x, g.index(index.tolist()), axis))
    return x
