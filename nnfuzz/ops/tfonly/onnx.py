"""ONNX lowerings of the TF-only ops: ONNX has none of them, so each is a composition of ONNX nodes
that computes what its torch lowering computes."""
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.materialize.onnx.compose import has, opmath, spell
from nnfuzz.ops.select.onnx import where
from nnfuzz.ops.tfonly import spec as T


@onnx_lowers(T.SquaredDifference)
def _squared_difference(op, g, x, y):
    """d * d with d = x - y (or y - x, the same value negated), or Pow(d, 2): one rounding for the
    difference, one for the square, as TF and the torch lowering."""
    a, b = (x, y) if g.draw("operands", ["x-y", "y-x"]) == "x-y" else (y, x)
    d = g.op("Sub", a, b)
    return spell(g, "square", {
        "Mul": lambda: g.op("Mul", d, d),
        "Pow": (lambda: g.op("Pow", d, g.like(2, d))) if has(g, "Pow", g.dtype(d), g.dtype(d)) else None,
    })


def _signs_differ(g, m, y):
    """Where m is non-zero and has the other sign than y (y is non-zero), drawn among equal tests."""
    zero = g.like(0, m)
    return spell(g, "signs_differ", {
        "Xor": lambda: g.op("And", g.op("Not", g.op("Equal", m, zero)),
                            g.op("Xor", g.op("Less", y, zero), g.op("Less", m, zero))),
        "Or-And": lambda: g.op("Or", g.op("And", g.op("Less", m, zero), g.op("Greater", y, zero)),
                               g.op("And", g.op("Greater", m, zero), g.op("Less", y, zero))),
        "Sign-product": lambda: g.op("Less", g.op("Mul", g.op("Sign", m), g.op("Sign", y)), zero),
    })


@onnx_lowers(T.FloorMod)
def _floor_mod(op, g, x, y):
    """torch.remainder's kernel: m = fmod(x, y) (Mod with fmod=1, exact), plus y where m != 0 and
    the signs of m and y differ; float16/bfloat16 in float32 (rounded once), as torch."""
    def build(a):
        b = g.cast(y, g.dtype(a))
        m = g.op("Mod", a, b, fmod=1)
        return where(g, _signs_differ(g, m, b), g.op("Add", m, b), m)
    return opmath(g, x, build)


@onnx_lowers(T.DivNoNan)
def _div_no_nan(op, g, x, y):
    """The torch lowering: z = (y == 0); where(z, 0, x / where(z, 1, y)); the inner select also
    as y + cast(z) (1 exactly where y is 0, y + 0 = y elsewhere). Half types in float32 as torch's
    division."""
    def build(a):
        b = g.cast(y, g.dtype(a))
        z = g.op("Equal", b, g.like(0, b))
        safe = spell(g, "divisor", {
            "Where": lambda: where(g, z, g.like(1, b), b),
            "Add-Cast": lambda: g.op("Add", b, g.cast(z, g.dtype(b))),
        })
        return where(g, z, g.like(0, a), g.op("Div", a, safe))
    return opmath(g, x, build)
