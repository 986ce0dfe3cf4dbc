"""Relax lowerings of the broadcasting binary ops and logical Not: one ``relax.op`` each."""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_each
from nnfuzz.ops.binary import spec as B

relax_each({
    B.Add: R.add,
    B.Sub: R.subtract,
    B.Mul: R.multiply,
    B.Div: R.divide,
    B.Pow: R.power,
    B.Fmod: R.mod,  # truncated: the sign of x, as C fmod
    B.Max: R.maximum,
    B.Min: R.minimum,
    B.Equal: R.equal,
    B.Greater: R.greater,
    B.Less: R.less,
    B.GreaterEqual: R.greater_equal,
    B.LessEqual: R.less_equal,
    B.And: R.logical_and,
    B.Or: R.logical_or,
    B.Xor: R.logical_xor,
    B.Not: R.logical_not,
})
