"""Padding. ``pads`` come in torch F.pad order: (last_begin, last_end, second_last_begin, ...);
negative pads (ConstantPad only) crop. Values are copied or filled, never computed, so every dtype
is kept (ConstantPad's ``value`` converted to it)."""
import numpy as np

from nnfuzz.ops.pad import spec as P
from nnfuzz.reference.registry import evaluates


def per_axis(op, ndim):
    """(begin, end) for each axis, first axis first (numpy's np.pad order)."""
    pairs = [(0, 0)] * ndim
    for k in range(len(op.pads) // 2):
        pairs[ndim - 1 - k] = (op.pads[2 * k], op.pads[2 * k + 1])
    return pairs


@evaluates(P.ConstantPad)
def _constant_pad(op, x):
    pairs = per_axis(op, x.ndim)
    crop = tuple(slice(max(-b, 0), x.shape[i] - max(-e, 0)) for i, (b, e) in enumerate(pairs))
    grow = [(max(b, 0), max(e, 0)) for b, e in pairs]
    return np.pad(x[crop], grow, mode="constant", constant_values=np.asarray(op.value).astype(x.dtype))


BORDER_MODES = {
    P.ReflectPad: "reflect",  # mirror about the edge, the edge itself not repeated
    P.ReplicatePad: "edge",  # repeat the edge value
    P.CircularPad: "wrap",  # continue with the other end (pad <= dim)
}


@evaluates(*BORDER_MODES)
def _border_pad(op, x):
    return np.pad(x, per_axis(op, x.ndim), mode=BORDER_MODES[type(op)])
