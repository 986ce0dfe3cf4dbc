"""ONNX lowerings of the binary family: one ONNX node each in the canonical spelling, with drawn
equivalent spellings (operands of a symmetric op swapped, Add as Sum, a comparison written as its mirror or
composed, a logic op by De Morgan, Sub as Add of Neg).

Every drawn spelling gives the same bits as the canonical one on every input, NaN included (hence no
``Not(Less)`` for float ``>=``: it would say True for a NaN), except Pow with its exponent widened
(exactly), which a runtime may evaluate in the wider type: the same power, within an ulp.
The family's Div, Pow and Fmod take floats only (see spec.py), so ONNX's integer Div (truncating) and
integer Pow never appear here.
"""
from nnfuzz.abstract.dtype import DTYPE_SIGNED_INTS, DType
from nnfuzz.materialize.onnx.compose import attrs, has, spell as _spell
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.binary import spec as B


def _symmetric(op_type):
    """A commutative op: ``T(x, y)`` or ``T(y, x)``."""
    def lower(op, g, x, y):
        return _spell(g, op_type, {"x,y": lambda: g.op(op_type, x, y), "y,x": lambda: g.op(op_type, y, x)})
    return lower


for _cls, _type in {B.Mul: "Mul", B.Equal: "Equal"}.items():
    onnx_lowers(_cls)(_symmetric(_type))


@onnx_lowers(B.Add)
def _add(op, g, x, y):
    """Add(x, y), Add(y, x), or the variadic Sum(x, y) where Sum takes the dtype (floats): one rounding either way."""
    sum_ = (lambda: g.op("Sum", x, y)) if has(g, "Sum", g.dtype(x), g.dtype(y)) else None
    return _spell(g, "Add", {"x,y": lambda: g.op("Add", x, y), "y,x": lambda: g.op("Add", y, x), "Sum": sum_})


@onnx_lowers(B.Sub)
def _sub(op, g, x, y):
    """x - y, or x + (-y) where ONNX Neg takes the dtype (floats, signed ints): IEEE defines
    subtraction as adding the negation, and two's complement wraps the same both ways."""
    options = {"Sub": lambda: g.op("Sub", x, y)}
    if g.dtype(x).is_float or g.dtype(x) in DTYPE_SIGNED_INTS:
        options["Add(Neg)"] = lambda: g.op("Add", x, g.op("Neg", y))
    return _spell(g, "sub", options)


@onnx_lowers(B.Div)
def _div(op, g, x, y):
    return g.op("Div", x, y)


WIDER = {DType.float16: DType.float32, DType.bfloat16: DType.float32, DType.float32: DType.float64}


@onnx_lowers(B.Pow)
def _pow(op, g, x, y):
    """Pow(x, y), or with the exponent cast to a wider float type (exact; ONNX Pow takes an exponent
    of another type and gives x's)."""
    options = {"Pow": lambda: g.op("Pow", x, y)}
    if g.dtype(y) in WIDER:
        options["wider exponent"] = lambda: g.op("Pow", x, g.cast(y, WIDER[g.dtype(y)]))
    return _spell(g, "Pow", options)


@onnx_lowers(B.Fmod)
def _fmod(op, g, x, y):
    """C fmod is ONNX Mod with fmod=1 (fmod=0, the default, is Python's floored remainder)."""
    return g.op("Mod", x, y, **attrs(g, "Mod", fmod=1))


def _variadic(op_type):
    """Max/Min take any number of inputs: ``T(x, y)``, ``T(y, x)`` or ``T(x, y, x)``."""
    def lower(op, g, x, y):
        return _spell(g, op_type, {"x,y": lambda: g.op(op_type, x, y), "y,x": lambda: g.op(op_type, y, x),
                                   "x,y,x": lambda: g.op(op_type, x, y, x)})
    return lower


onnx_lowers(B.Max)(_variadic("Max"))
onnx_lowers(B.Min)(_variadic("Min"))


def _strict(op_type, mirror):
    """x > y is y < x (and the other way round)."""
    def lower(op, g, x, y):
        return _spell(g, op_type, {op_type: lambda: g.op(op_type, x, y), mirror: lambda: g.op(mirror, y, x)})
    return lower


onnx_lowers(B.Greater)(_strict("Greater", "Less"))
onnx_lowers(B.Less)(_strict("Less", "Greater"))


def _or_equal(op_type, mirror, strict, opposite):
    """x >= y as GreaterOrEqual(x, y), LessOrEqual(y, x), Or(Greater(x, y), Equal(x, y)), and for
    integers also Not(Less(x, y)) (wrong for floats: a NaN compares False both ways). Where the opset's
    GreaterOrEqual/LessOrEqual lack the dtype (bfloat16 before 16) only the Or form is written."""
    def lower(op, g, x, y):
        options = {}
        if has(g, op_type, g.dtype(x), g.dtype(x)):
            options = {op_type: lambda: g.op(op_type, x, y), mirror: lambda: g.op(mirror, y, x)}
        options[f"Or({strict},Equal)"] = lambda: g.op("Or", g.op(strict, x, y), g.op("Equal", x, y))
        if not g.dtype(x).is_float:
            options[f"Not({opposite})"] = lambda: g.op("Not", g.op(opposite, x, y))
        return _spell(g, op_type, options)
    return lower


onnx_lowers(B.GreaterEqual)(_or_equal("GreaterOrEqual", "LessOrEqual", "Greater", "Less"))
onnx_lowers(B.LessEqual)(_or_equal("LessOrEqual", "GreaterOrEqual", "Less", "Greater"))


def _de_morgan(op_type, dual):
    """a AND b = NOT(NOT a OR NOT b), and dually; operands possibly swapped."""
    def lower(op, g, x, y):
        return _spell(g, op_type, {"x,y": lambda: g.op(op_type, x, y), "y,x": lambda: g.op(op_type, y, x),
                                   f"Not({dual}(Not,Not))": lambda: g.op("Not", g.op(dual, g.op("Not", x),
                                                                                      g.op("Not", y)))})
    return lower


onnx_lowers(B.And)(_de_morgan("And", "Or"))
onnx_lowers(B.Or)(_de_morgan("Or", "And"))


@onnx_lowers(B.Xor)
def _xor(op, g, x, y):
    """a XOR b = NOT(a == b) on bools."""
    return _spell(g, "Xor", {"x,y": lambda: g.op("Xor", x, y), "y,x": lambda: g.op("Xor", y, x),
                             "Not(Equal)": lambda: g.op("Not", g.op("Equal", x, y))})


@onnx_lowers(B.Not)
def _not(op, g, x):
    """NOT a = a XOR True = (a == False)."""
    return _spell(g, "Not", {"Not": lambda: g.op("Not", x),
                             "Xor(True)": lambda: g.op("Xor", x, g.like(True, x)),
                             "Equal(False)": lambda: g.op("Equal", x, g.like(False, x))})
