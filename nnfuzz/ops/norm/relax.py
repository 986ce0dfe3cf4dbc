"""Relax lowerings of the normalizations: ``relax.op.nn`` batch (inference, with the torch lowering's
running statistics as arange formulas), group, instance and layer norms."""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_lowers
from nnfuzz.ops.norm import spec as N


def _linspace(g, lo: float, hi: float, n: int, dt: str):
    """torch.linspace(lo, hi, n) as lo + i * step (printable without a tensor constant)."""
    i = R.arange(0, n, 1, dt)
    step = (hi - lo) / (n - 1) if n > 1 else 0.0
    return R.add(g.scalar(lo, dt), R.multiply(i, g.scalar(step, dt)))


@relax_lowers(N.BatchNorm)
def _batch_norm(op, g, x, w, b):
    c, dt = g.shape(x)[1], g.dtype(x)
    mean, var = _linspace(g, -0.5, 0.5, c, dt), _linspace(g, 0.5, 2.0, c, dt)
    out = g.emit(R.nn.batch_norm(x, w, b, mean, var, axis=1, epsilon=float(op.eps), training=False))
    return g.relax.TupleGetItem(out, 0)


@relax_lowers(N.InstanceNorm)
def _instance_norm(op, g, x, w, b):
    return R.nn.instance_norm(x, w, b, 1, list(range(2, g.rank(x))), epsilon=float(op.eps))


@relax_lowers(N.GroupNorm)
def _group_norm(op, g, x, w, b):
    return R.nn.group_norm(x, w, b, op.groups, 1, list(range(2, g.rank(x))), epsilon=float(op.eps))


@relax_lowers(N.LayerNorm)
def _layer_norm(op, g, x, *params):
    r = g.rank(x)
    axes = list(range(r - op.k, r))
    if op.affine:
        w, b = params
    else:
        shape, dt = list(g.shape(x)[r - op.k:]), g.dtype(x)
        w, b = R.ones(shape, dt), R.zeros(shape, dt)
    return R.nn.layer_norm(x, w, b, axes, epsilon=float(op.eps))
