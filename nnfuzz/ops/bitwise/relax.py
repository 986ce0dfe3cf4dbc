"""Relax lowerings of the integer ops: Relax's integer divide truncates (IntDiv), floor_mod takes the
divisor's sign (Mod); shift amounts are cast to the shifted value's dtype, as the reference."""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_each, relax_lowers
from nnfuzz.ops.bitwise import spec as K

relax_each({
    K.BitwiseAnd: R.bitwise_and,
    K.BitwiseOr: R.bitwise_or,
    K.BitwiseXor: R.bitwise_xor,
    K.BitwiseNot: R.bitwise_not,
    K.Mod: R.floor_mod,
    K.IntDiv: R.divide,
})


@relax_lowers(K.BitShift)
def _shift(op, g, x, y):
    shift = R.left_shift if op.direction == "LEFT" else R.right_shift
    return shift(x, R.astype(y, g.dtype(x)))

# IntPow has none: Relax's power takes floats only ("power only applies to float" at legalization)
