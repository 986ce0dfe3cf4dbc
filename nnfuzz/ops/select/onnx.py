"""ONNX lowerings of Where, Clip and Cast, with their equivalent spellings drawn."""
from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.materialize.onnx.compose import clip, has, spell
from nnfuzz.ops.select import spec as S

# torch builds float16 and bfloat16 from a float (c10::Half/BFloat16 take a float): from these
# sources, rounding to float32 first can give another result than rounding once (1 + 2^-11 + 2^-40
# is 1.0 in torch and 1.001 in one rounding to float16), so the ONNX model converts through float32 too
_THROUGH_FLOAT32 = {DType.float16: (DType.float64,),
                    DType.bfloat16: (DType.float64, DType.int32, DType.int64)}


def where(g, c, x, y):
    """Where(c, x, y) or Where(Not(c), y, x); bfloat16 before opset 16 (no Where for it) on
    float32 copies of x and y, which is exact."""
    dt = g.dtype(x)
    if not has(g, "Where", DType.bool, dt, dt):
        wide = where(g, c, g.cast(x, DType.float32), g.cast(y, DType.float32))
        return g.cast(wide, dt)
    return spell(g, "where", {
        "Where": lambda: g.op("Where", c, x, y),
        "Where-Not": lambda: g.op("Where", g.op("Not", c), y, x),
    })


@onnx_lowers(S.Where)
def _where(op, g, c, x, y):
    return where(g, c, x, y)


@onnx_lowers(S.Clip)
def _clip(op, g, x):
    """Bounds as 0-d constants of x's dtype (integral, so exact in every dtype)."""
    integer = g.dtype(x).is_int
    lo, hi = (int(op.min), int(op.max)) if integer else (float(op.min), float(op.max))
    return clip(g, x, lo, hi)


@onnx_lowers(S.Cast)
def _cast(op, g, x):
    """Cast, or CastLike (opset 15) to a 0-d constant of the target dtype; to bool also x != 0
    (Not(Equal(x, 0)): NaN is true, as in torch), from bool also Where(x, 1, 0)."""
    to, src = op.to, g.dtype(x)
    if src in _THROUGH_FLOAT32.get(to, ()):
        x, src = g.cast(x, DType.float32), DType.float32
    return spell(g, "cast", {
        "Cast": lambda: g.op("Cast", x, to=to.onnx()),
        "CastLike": (lambda: g.op("CastLike", x, g.scalar(0, to))) if has(g, "CastLike", src, to) else None,
        "Not-Equal": (lambda: g.op("Not", g.op("Equal", x, g.like(0, x)))) if to is DType.bool else None,
        "Where": (lambda: g.op("Where", x, g.scalar(1, to), g.scalar(0, to)))
        if src is DType.bool and has(g, "Where", DType.bool, to, to) else None,
    })
