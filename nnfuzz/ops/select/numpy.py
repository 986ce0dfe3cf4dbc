"""Where, Clip and Cast.

Where picks values without computing them (any dtype, kept). Clip: floats in float64, integers in
their own dtype with integral bounds. Cast converts once, straight to the target dtype (no detour
through float64, which would round twice): float to int truncates toward zero and then wraps (done
by eval_op's cast), anything to bool is ``!= 0`` (NaN is true), bool to a number is 0 or 1.
"""
import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.ops.select import spec as S
from nnfuzz.reference.registry import evaluates


@evaluates(S.Where)
def _where(op, cond, x, y):
    return np.where(cond, x, y)


@evaluates(S.Clip)
def _clip(op, x):
    if x.dtype.kind == "i":
        return np.minimum(np.maximum(x, int(op.min)), int(op.max)).astype(x.dtype)
    return np.minimum(np.maximum(np.asarray(x, dtype=np.float64), op.min), op.max)  # NaN stays NaN


@evaluates(S.Cast)
def _cast(op, x):
    is_float = x.dtype.kind not in "iub"  # bfloat16 has kind "V"
    if op.to.is_int and is_float:
        return np.trunc(np.asarray(x, dtype=np.float64))  # eval_op wraps it into op.to
    if op.to is DType.bool:
        return x != 0
    return x.astype(op.to.numpy())
