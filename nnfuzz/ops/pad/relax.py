"""Relax lowerings of the pads: ``relax.op.nn.pad`` for constant (non-negative pads), reflect and replicate
modes; a crop, and circular padding, as slices and concatenations. (TVM 0.27 takes any pad_mode string
and pads with the constant for one it does not know, "edge" included: the mode names are Relax's.)"""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_lowers
from nnfuzz.ops.pad import spec as P


def _widths(op, rank):
    """Relax's pad_width (begin/end per axis, first axis first) from torch's pads (last axis first)."""
    w = [0] * (2 * rank)
    for k in range(len(op.pads) // 2):
        ax = rank - 1 - k
        w[2 * ax], w[2 * ax + 1] = op.pads[2 * k], op.pads[2 * k + 1]
    return w


def _crop(g, x, w):
    """``x`` with negative widths cut off, and the widths left to pad."""
    shape = g.shape(x)
    axes = [a for a in range(len(shape)) if w[2 * a] < 0 or w[2 * a + 1] < 0]
    if axes:
        x = g.emit(R.strided_slice(x, axes, [max(0, -w[2 * a]) for a in axes],
                                   [shape[a] - max(0, -w[2 * a + 1]) for a in axes]))
    return x, [max(0, v) for v in w]


@relax_lowers(P.ConstantPad)
def _constant_pad(op, g, x):
    x, w = _crop(g, x, _widths(op, g.rank(x)))
    if g.dtype(x) == "bool":
        return R.astype(R.nn.pad(R.astype(x, "int8"), w, "constant", float(op.value)), "bool")
    return R.nn.pad(x, w, "constant", float(op.value))


@relax_lowers(P.ReflectPad)
def _reflect_pad(op, g, x):
    return R.nn.pad(x, _widths(op, g.rank(x)), "reflect")


@relax_lowers(P.ReplicatePad)
def _replicate_pad(op, g, x):
    return R.nn.pad(x, _widths(op, g.rank(x)), "replicate")


@relax_lowers(P.CircularPad)
def _circular_pad(op, g, x):
    w = _widths(op, g.rank(x))
    for a in range(g.rank(x)):
        b, e = w[2 * a], w[2 * a + 1]
        n = g.shape(x)[a]
        if b or e:
            parts = ([R.strided_slice(x, [a], [n - b], [n])] if b else []) + [x] \
                + ([R.strided_slice(x, [a], [0], [e])] if e else [])
            x = g.emit(R.concat(parts, a))
    return x
