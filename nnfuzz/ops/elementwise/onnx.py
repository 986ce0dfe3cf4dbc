"""ONNX lowerings of the elementwise ops: one node where ONNX has one that computes what the torch
lowering computes, else a composition (said on the lowering), with the equivalent spellings drawn.

A composition of what torch computes in one kernel goes through ``opmath`` (float16/bfloat16 in
float32, rounded once, as torch's CPU kernels). ONNX stores float attributes as float32, so a node
whose constant float32 does not hold exactly (Selu, HardSigmoid, HardSwish, and Gelu, whose function
body has sqrt(1/2) as a float constant) is not written for float64: its composition with float64
constants is.
"""
import math

import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.compose import HALF, attrs, clip, elu_like, has, log1p, opmath, softplus, spell
from nnfuzz.materialize.onnx.lowering import onnx_each, onnx_lowers
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.ops.elementwise.numpy import SELU_ALPHA, SELU_SCALE  # torch's constants

onnx_each({
    E.Sigmoid: "Sigmoid",
    E.Tanh: "Tanh",
    E.Exp: "Exp",
    E.Log: "Log",
    E.Sqrt: "Sqrt",
    E.Erf: "Erf",
    E.Sin: "Sin",
    E.Cos: "Cos",
    E.Tan: "Tan",
    E.Asin: "Asin",
    E.Acos: "Acos",
    E.Atan: "Atan",
    E.Abs: "Abs",
    E.Sign: "Sign",
    E.Round: "Round",  # half to even, like torch.round
})


def _exact_f32(g, x) -> bool:
    """Whether a node with float32 constants computes x's dtype as torch does (not for float64)."""
    return g.dtype(x) is not DType.float64


def _const(value, g, v):
    """``value`` rounded to v's dtype, as torch rounds a kernel's scalar constant (numpy scalar)."""
    return np.asarray(value, dtype=g.dtype(v).numpy())


# ---- rectifiers and clipping --------------------------------------------------------------------

@onnx_lowers(E.Relu)
def _relu(op, g, x):
    return spell(g, "relu", {
        "Relu": (lambda: g.op("Relu", x)) if has(g, "Relu", g.dtype(x)) else None,
        "Max": lambda: g.op("Max", x, g.like(0, x)),
    })


@onnx_lowers(E.Relu6)
def _relu6(op, g, x):
    return spell(g, "relu6", {
        "clip": lambda: clip(g, x, 0, 6),
        "Relu-Min": (lambda: g.op("Min", g.op("Relu", x), g.like(6, x))) if has(g, "Relu", g.dtype(x)) else None,
    })


@onnx_lowers(E.LeakyRelu)
def _leaky_relu(op, g, x):
    """x where x > 0 else x * slope: LeakyRelu, PRelu with a 0-d slope, or Max(x, x * slope) (the
    slope is below 1, so the larger of the two is the right one)."""
    s = op.negative_slope
    return spell(g, "leaky_relu", {
        "LeakyRelu": lambda: g.op("LeakyRelu", x, alpha=float(s)),
        "PRelu": (lambda: g.op("PRelu", x, g.like(s, x))) if has(g, "PRelu", g.dtype(x), g.dtype(x)) else None,
        "Max-Mul": lambda: g.op("Max", x, g.op("Mul", x, g.like(s, x))),
    })


def _shrink_where(g, x, lambd):
    """torch's hardshrink: x where |x| > lambd, else 0."""
    return g.op("Where", g.op("Greater", g.op("Abs", x), g.like(lambd, x)), x, g.like(0, x))


@onnx_lowers(E.Hardshrink)
def _hardshrink(op, g, x):
    """Shrink with bias 0, or Where(|x| > lambd, x, 0)."""
    return spell(g, "hardshrink", {
        "Shrink": (lambda: g.op("Shrink", x, **attrs(g, "Shrink", lambd=float(op.lambd), bias=0.0)))
        if has(g, "Shrink", g.dtype(x)) else None,
        "Where": lambda: opmath(g, x, lambda v: _shrink_where(g, v, op.lambd)),
    })


@onnx_lowers(E.Softshrink)
def _softshrink(op, g, x):
    """Shrink with bias = lambd, or x - clip(x, -lambd, lambd) (exact: the same one subtraction)."""
    lam = float(op.lambd)
    return spell(g, "softshrink", {
        "Shrink": (lambda: g.op("Shrink", x, **attrs(g, "Shrink", lambd=lam, bias=lam)))
        if has(g, "Shrink", g.dtype(x)) else None,
        "Sub-Clip": lambda: g.op("Sub", x, clip(g, x, -lam, lam)),
    })


# ---- smooth activations -------------------------------------------------------------------------

def _gelu_formula(g, v, approximate):
    """torch's gelu kernel: x * 0.5 * (1 + erf(x * sqrt(1/2))), or with approximate="tanh"
    0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))."""
    one, half = g.like(1, v), g.like(0.5, v)
    if approximate == "none":
        erf = g.op("Erf", g.op("Mul", v, g.like(math.sqrt(0.5), v)))
        return g.op("Mul", g.op("Mul", v, half), g.op("Add", one, erf))
    beta = 1.41421356237309504880 * 1.12837916709551257390 * 0.5  # M_SQRT2 * M_2_SQRTPI * 0.5
    cube = g.op("Mul", g.op("Mul", v, v), v)
    inner = g.op("Mul", g.like(beta, v), g.op("Add", v, g.op("Mul", g.like(0.044715, v), cube)))
    return g.op("Mul", g.op("Mul", half, v), g.op("Add", one, g.op("Tanh", inner)))


@onnx_lowers(E.Gelu)
def _gelu(op, g, x):
    """The Gelu node (opset 20; not for float64, see above), or torch's formula (Erf or Tanh)."""
    return spell(g, "gelu", {
        "Gelu": (lambda: g.op("Gelu", x, **attrs(g, "Gelu", approximate=op.approximate)))
        if has(g, "Gelu", g.dtype(x)) and _exact_f32(g, x) else None,
        "formula": lambda: opmath(g, x, lambda v: _gelu_formula(g, v, op.approximate)),
    })


@onnx_lowers(E.Softplus)
def _softplus(op, g, x):
    """The Softplus node, or torch's formula: x where x > 20, else log1p(e^x)."""
    return spell(g, "softplus", {
        "Softplus": lambda: g.op("Softplus", x),
        "formula": lambda: opmath(g, x, lambda v: softplus(g, v)),
    })


@onnx_lowers(E.Elu)
def _elu(op, g, x):
    """The Elu node, or torch's formula: x where x > 0, else expm1(x) * alpha."""
    return spell(g, "elu", {
        "Elu": lambda: g.op("Elu", x, **attrs(g, "Elu", alpha=float(op.alpha))),
        "formula": lambda: opmath(g, x, lambda v: elu_like(g, v, op.alpha)),
    })


@onnx_lowers(E.Celu)
def _celu(op, g, x):
    """The Celu node, or torch's formula: x where x > 0, else expm1(x * (1 / alpha)) * alpha."""
    return spell(g, "celu", {
        "Celu": (lambda: g.op("Celu", x, **attrs(g, "Celu", alpha=float(op.alpha))))
        if has(g, "Celu", g.dtype(x)) else None,
        "formula": lambda: opmath(g, x, lambda v: elu_like(g, v, op.alpha, input_scale=1.0 / op.alpha)),
    })


def _selu_formula(g, v):
    """torch's selu: x * scale where x > 0, else expm1(x) * (alpha * scale), the product rounded
    in x's dtype as torch computes it."""
    neg_coef = _const(SELU_ALPHA, g, v) * _const(SELU_SCALE, g, v)
    return elu_like(g, v, neg_coef, pos_coef=_const(SELU_SCALE, g, v))


@onnx_lowers(E.Selu)
def _selu(op, g, x):
    """The Selu node (its alpha and gamma are torch's constants rounded to float32: not for float64),
    or torch's formula."""
    return spell(g, "selu", {
        "Selu": (lambda: g.op("Selu", x, **attrs(g, "Selu", alpha=SELU_ALPHA, gamma=SELU_SCALE)))
        if _exact_f32(g, x) else None,
        "formula": lambda: opmath(g, x, lambda v: _selu_formula(g, v)),
    })


def _hard_sigmoid_formula(g, v):
    """torch's hardsigmoid kernel: min(max(x + 3, 0), 6) / 6."""
    return g.op("Div", clip(g, g.op("Add", v, g.like(3, v)), 0, 6), g.like(6, v))


def _hard_sigmoid_node(g, x):
    return g.op("HardSigmoid", x, alpha=1.0 / 6.0, **attrs(g, "HardSigmoid", beta=0.5))


@onnx_lowers(E.HardSigmoid)
def _hard_sigmoid(op, g, x):
    """HardSigmoid with alpha 1/6 (float32: not for float64), or torch's formula."""
    return spell(g, "hard_sigmoid", {
        "HardSigmoid": (lambda: _hard_sigmoid_node(g, x)) if _exact_f32(g, x) else None,
        "formula": lambda: opmath(g, x, lambda v: _hard_sigmoid_formula(g, v)),
    })


def _hard_swish_formula(g, v):
    """torch's hardswish kernel: x * min(max(x + 3, 0), 6) / 6."""
    return g.op("Div", g.op("Mul", v, clip(g, g.op("Add", v, g.like(3, v)), 0, 6)), g.like(6, v))


@onnx_lowers(E.HardSwish)
def _hard_swish(op, g, x):
    """HardSwish (opset 14), x * HardSigmoid(x) (both with a float32 1/6: not for float64), or
    torch's formula x * min(max(x + 3, 0), 6) / 6."""
    f32_ok = _exact_f32(g, x)
    return spell(g, "hard_swish", {
        "HardSwish": (lambda: g.op("HardSwish", x)) if f32_ok and has(g, "HardSwish", g.dtype(x)) else None,
        "Mul-HardSigmoid": (lambda: g.op("Mul", x, _hard_sigmoid_node(g, x))) if f32_ok else None,
        "formula": lambda: opmath(g, x, lambda v: _hard_swish_formula(g, v)),
    })


@onnx_lowers(E.Mish)
def _mish(op, g, x):
    """Mish (opset 18), x * Tanh(Softplus(x)), or torch's formula x * tanh(softplus(x))."""
    dt = g.dtype(x)
    return spell(g, "mish", {
        "Mish": (lambda: g.op("Mish", x)) if has(g, "Mish", dt) else None,
        "Mul-Tanh-Softplus": lambda: g.op("Mul", x, g.op("Tanh", g.op("Softplus", x))),
        "formula": lambda: opmath(g, x, lambda v: g.op("Mul", v, g.op("Tanh", softplus(g, v)))),
    })


def _silu_formula(g, v):
    """torch's silu kernel: x / (1 + e^-x)."""
    return g.op("Div", v, g.op("Add", g.like(1, v), g.op("Exp", g.op("Neg", v))))


@onnx_lowers(E.Silu)
def _silu(op, g, x):
    """x * Sigmoid(x), Swish (opset 24), or torch's kernel x / (1 + e^-x)."""
    swish = has(g, "Swish", g.dtype(x))
    return spell(g, "silu", {
        "Mul-Sigmoid": lambda: g.op("Mul", x, g.op("Sigmoid", x)),
        "Swish": (lambda: g.op("Swish", x, **attrs(g, "Swish", alpha=1.0))) if swish else None,
        "formula": lambda: opmath(g, x, lambda v: _silu_formula(g, v)),
    })


@onnx_lowers(E.Softsign)
def _softsign(op, g, x):
    """The Softsign node, or torch's x / (|x| + 1)."""
    return spell(g, "softsign", {
        "Softsign": (lambda: g.op("Softsign", x)) if has(g, "Softsign", g.dtype(x)) else None,
        "formula": lambda: g.op("Div", x, g.op("Add", g.op("Abs", x), g.like(1, x))),
    })


@onnx_lowers(E.Tanhshrink)
def _tanhshrink(op, g, x):
    """x - tanh(x) (no ONNX node)."""
    return g.op("Sub", x, g.op("Tanh", x))


@onnx_lowers(E.LogSigmoid)
def _log_sigmoid(op, g, x):
    """torch's lowering, op by op: (x - relu(x)) - log1p(e^-|x|); x - relu(x) is min(x, 0) exactly
    (drawn), and log1p is composed (ONNX has none) in float32 for half types as torch.log1p."""
    neg_part = spell(g, "min0", {
        "Sub-Relu": (lambda: g.op("Sub", x, g.op("Relu", x))) if has(g, "Relu", g.dtype(x)) else None,
        "Min": lambda: g.op("Min", x, g.like(0, x)),
    })
    e = g.op("Exp", g.op("Neg", g.op("Abs", x)))
    return g.op("Sub", neg_part, opmath(g, e, lambda v: log1p(g, v)))


# ---- exponentials, logarithms, powers -----------------------------------------------------------

@onnx_lowers(E.Log2)
def _log2(op, g, x):
    """torch's Log(x) / ln2 with ln2 exact in x's dtype (float32 for half types: torch divides by a
    Python scalar in float32 there)."""
    log = g.op("Log", x)
    return opmath(g, log, lambda v: g.op("Div", v, g.like(math.log(2.0), v)))


@onnx_lowers(E.Log1p)
def _log1p(op, g, x):
    """log(1 + x) composed to a few ulps (ONNX has no Log1p): see compose.log1p."""
    return opmath(g, x, lambda v: log1p(g, v))


@onnx_lowers(E.Reciprocal)
def _reciprocal(op, g, x):
    return spell(g, "reciprocal", {
        "Reciprocal": lambda: g.op("Reciprocal", x),
        "Div": lambda: g.op("Div", g.like(1, x), x),
    })


@onnx_lowers(E.Rsqrt)
def _rsqrt(op, g, x):
    """torch's kernel 1 / sqrt(x) (two roundings): Reciprocal(Sqrt) or Div(1, Sqrt)."""
    def build(v):
        root = g.op("Sqrt", v)
        return spell(g, "rsqrt", {
            "Reciprocal": lambda: g.op("Reciprocal", root),
            "Div": lambda: g.op("Div", g.like(1, v), root),
        })
    return opmath(g, x, build)


@onnx_lowers(E.Square)
def _square(op, g, x):
    """x * x (integers wrap), or Pow(x, 2) with the exponent of x's dtype or int64 (drawn)."""
    dt = g.dtype(x)

    def power():
        exp_dt = g.draw("exponent", [dt, DType.int64] if has(g, "Pow", dt, dt) else [DType.int64])
        return g.op("Pow", x, g.scalar(2, exp_dt))
    return spell(g, "square", {
        "Mul": lambda: g.op("Mul", x, x),
        "Pow": power if has(g, "Pow", dt, DType.int64) else None,
    })


# ---- sign and classification --------------------------------------------------------------------

@onnx_lowers(E.Neg)
def _neg(op, g, x):
    return spell(g, "neg", {"Neg": lambda: g.op("Neg", x), "Mul": lambda: g.op("Mul", x, g.like(-1, x))})


def _mirrored(g, x, op_type, other):
    """``op_type`` of x, or -``other``(-x) (floor(x) = -ceil(-x): exact, signed zeros included)."""
    return spell(g, op_type.lower(), {
        op_type: lambda: g.op(op_type, x),
        f"Neg-{other}-Neg": lambda: g.op("Neg", g.op(other, g.op("Neg", x))),
    })


@onnx_lowers(E.Floor)
def _floor(op, g, x):
    return _mirrored(g, x, "Floor", "Ceil")


@onnx_lowers(E.Ceil)
def _ceil(op, g, x):
    return _mirrored(g, x, "Ceil", "Floor")


@onnx_lowers(E.IsNan)
def _isnan(op, g, x):
    return spell(g, "isnan", {
        "IsNaN": lambda: g.op("IsNaN", x),
        "Not-Equal": lambda: g.op("Not", g.op("Equal", x, x)),
    })


@onnx_lowers(E.IsInf)
def _isinf(op, g, x):
    """IsInf (float16/bfloat16 from opset 20; before, on x cast to float32, exact), or |x| == inf."""
    def node(v):
        return g.op("IsInf", v, **attrs(g, "IsInf", detect_negative=1, detect_positive=1))
    dt = g.dtype(x)
    return spell(g, "isinf", {
        "IsInf": (lambda: node(x)) if has(g, "IsInf", dt) else None,
        "IsInf-float32": (lambda: node(g.cast(x, DType.float32))) if dt in HALF else None,
        "Equal-Abs": lambda: g.op("Equal", g.op("Abs", x), g.like(np.inf, x)),
    })
