"""Value-search aids of the integer ops: bitwise results have no float surrogate (and cannot
overflow), and an int minimum divided by -1 is kept out of Div and Mod."""
import torch

from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.torch.losses import above, domain_loss, int_range
from nnfuzz.materialize.torch.proxy import no_surrogate, surrogate
from nnfuzz.ops.bitwise import spec as K

surrogate(K.BitwiseAnd, K.BitwiseOr, K.BitwiseXor, K.BitwiseNot, K.BitShift)(no_surrogate)


@domain_loss(K.IntDiv, K.Mod)
def _min_over_minus_one(op, xs, dts):
    # the quotient's overflow; the search's own overflow check misses it in int64 (2^63 rounds to
    # int64's max in float64)
    if dts[0] is DType.uint8:
        return torch.zeros(())
    x, y = torch.broadcast_tensors(xs[0], xs[1])
    lo = int_range(dts[0])[0]
    return above(torch.where(y.detach() == -1, x, torch.zeros_like(x)), lo + 1)
