"""ONNX lowerings of the integer ops: one node each (Bitwise* and int8/int16/uint8 Div need opsets 18 and
14, signed BitShift 28: the builder raises NotAtOpset and the model is built at that opset)."""
import numpy as np

from nnfuzz.materialize.onnx.lowering import onnx_each, onnx_lowers
from nnfuzz.ops.bitwise import spec as K

onnx_each({
    K.BitwiseAnd: "BitwiseAnd",
    K.BitwiseOr: "BitwiseOr",
    K.BitwiseXor: "BitwiseXor",
    K.IntDiv: "Div",
    K.IntPow: "Pow",
})


@onnx_lowers(K.BitwiseNot)
def _not(op, g, x):
    if g.flip("not", "BitwiseXor(x, -1)", "BitwiseNot"):  # every bit set: -1, or 255 for uint8
        return g.op("BitwiseXor", x, g.like(np.array(-1).astype(g.dtype(x).numpy()), x))
    return g.op("BitwiseNot", x)


@onnx_lowers(K.BitShift)
def _shift(op, g, x, y):
    return g.op("BitShift", x, y, direction=op.direction)


@onnx_lowers(K.Mod)
def _mod(op, g, x, y):
    return g.op("Mod", x, y, fmod=0 if g.flip("fmod", "explicit", "default") else None)
