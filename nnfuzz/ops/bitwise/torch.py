"""torch lowerings of the integer ops. Div and Mod guard their divisor: the value search runs a lowering
on values outside the op's domain before its loss moves them in, and torch's integer kernels raise on a
zero divisor and kill the process (SIGFPE) on an int minimum divided by -1. On the domain the guard
changes nothing."""
import torch

from nnfuzz.materialize.onnx.export import no_torch_export
from nnfuzz.materialize.torch.lowering import lower_each, lowers
from nnfuzz.ops.bitwise import spec as K

lower_each({
    K.BitwiseAnd: torch.bitwise_and,
    K.BitwiseOr: torch.bitwise_or,
    K.BitwiseXor: torch.bitwise_xor,
    K.BitwiseNot: torch.bitwise_not,
})
for _cls in (K.BitwiseAnd, K.BitwiseOr, K.BitwiseXor, K.BitwiseNot):
    no_torch_export(_cls, "torch 2.13's TorchScript exporter has no ONNX symbolic for integer bitwise ops")


@lowers(K.BitShift)
def _shift(op, x, y):
    shift = torch.bitwise_left_shift if op.direction == "LEFT" else torch.bitwise_right_shift
    return shift(x, y)


no_torch_export(K.BitShift, "torch 2.13's TorchScript exporter writes x >> y as x / 2**y (Pow, Div), which rounds "
                "toward zero where the shift floors (negative x): its models are not the op")


def defined_divisor(x, y):
    """``y``, with 1 where ``x / y`` is undefined (y == 0; an int minimum over -1)."""
    bad = y == 0
    if not x.is_floating_point() and x.dtype != torch.uint8:  # (float: the search's surrogates)
        bad = bad | ((y == -1) & (x == torch.iinfo(x.dtype).min))
    return torch.where(bad, torch.ones_like(y), y)


@lowers(K.Mod)
def _mod(op, x, y):
    return torch.remainder(x, defined_divisor(x, y))  # the divisor's sign, as Python's %


@lowers(K.IntDiv)
def _int_div(op, x, y):
    return torch.div(x, defined_divisor(x, y), rounding_mode="trunc")


@lowers(K.IntPow)
def _int_pow(op, x, y):
    # torch raises on a negative integer exponent (outside the domain, see defined_divisor) and
    # would promote mixed dtypes: the exponent in the base's dtype, as ONNX's result
    return torch.pow(x, y.to(x.dtype).clamp(min=0))
