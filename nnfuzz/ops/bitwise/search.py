"""Value-search aids of the integer ops: surrogates of the bitwise ops (their results, which cannot
overflow, carrying the gradient of a smooth stand-in), and an int minimum divided by -1 kept out of Div
and Mod."""
import torch

from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.torch.losses import above, domain_loss, int_range
from nnfuzz.materialize.torch.proxy import anchored, surrogate
from nnfuzz.ops.bitwise import spec as K


@surrogate(K.BitwiseNot)
def _not(op, outs, xs, args):
    return [anchored(outs[0], -xs[0])]  # ~x is -x - 1 (255 - x for uint8)


@surrogate(K.BitShift)
def _shift(op, outs, xs, args):
    scale = torch.exp2(xs[1] if op.direction == "LEFT" else -xs[1])  # x * 2^y or x / 2^y, before wrapping
    return [anchored(outs[0], xs[0] * scale)]


@surrogate(K.BitwiseAnd, K.BitwiseOr, K.BitwiseXor)
def _logic(op, outs, xs, args):
    return [anchored(outs[0], (xs[0] + xs[1]) / 2)]  # each result bit comes from one of the two


@domain_loss(K.IntDiv, K.Mod)
def _min_over_minus_one(op, xs, dts):
    # the quotient's overflow; the search's own overflow check misses it in int64 (2^63 rounds to
    # int64's max in float64)
    if dts[0] is DType.uint8:
        return torch.zeros(())
    x, y = torch.broadcast_tensors(xs[0], xs[1])
    lo = int_range(dts[0])[0]
    return above(torch.where(y.detach() == -1, x, torch.zeros_like(x)), lo + 1)
