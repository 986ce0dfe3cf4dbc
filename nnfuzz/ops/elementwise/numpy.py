"""Elementwise unary ops. Floats: the formula in float64 (rounded once by eval_op); integers in
their own dtype (Relu, Relu6, Square, Abs, Neg, Sign wrap like C)."""
import math

import numpy as np

from nnfuzz.ops.elementwise import spec as E
from nnfuzz.reference.registry import evaluates

SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805  # torch's constants, exactly


def f64(x):
    return np.asarray(x, dtype=np.float64)


# The formulas below are the one definition of these functions' numerics: the value-range rules
# (ranges.py) use them too.
def softplus(v):
    return np.logaddexp(0.0, v)  # log(1 + e^v) without overflow


def sigmoid(v):
    """1 / (1 + e^-v), stable for large |v| and accurate in both tails (e^v / (1 + e^v) left of 0:
    a tanh form rounds sigmoid(-40) to 0 where float32 holds 4.2e-18)."""
    e = np.exp(-np.abs(v))
    return np.where(np.asarray(v) >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def selu(v):
    return SELU_SCALE * np.where(v > 0, v, SELU_ALPHA * np.expm1(np.minimum(v, 0.0)))


_erf = np.vectorize(math.erf, otypes=[np.float64])

FLOAT_FORMULAS = {
    E.Sigmoid: sigmoid,
    E.Tanh: np.tanh,
    E.Softplus: softplus,
    E.Selu: selu,
    E.HardSwish: lambda v: v * np.clip(v + 3.0, 0.0, 6.0) / 6.0,
    E.HardSigmoid: lambda v: np.clip(v / 6.0 + 0.5, 0.0, 1.0),
    E.Mish: lambda v: v * np.tanh(softplus(v)),
    E.Silu: lambda v: v * sigmoid(v),
    E.Softsign: lambda v: v / (1.0 + np.abs(v)),
    E.LogSigmoid: lambda v: -softplus(-v),
    E.Tanhshrink: lambda v: v - np.tanh(v),
    E.Exp: np.exp,
    E.Log: np.log,
    E.Log2: np.log2,
    E.Log1p: np.log1p,
    E.Sqrt: np.sqrt,
    E.Rsqrt: lambda v: 1.0 / np.sqrt(v),
    E.Reciprocal: lambda v: 1.0 / v,
    E.Erf: _erf,
    E.Sin: np.sin,
    E.Cos: np.cos,
    E.Tan: np.tan,
    E.Asin: np.arcsin,
    E.Acos: np.arccos,
    E.Atan: np.arctan,
    E.Floor: np.floor,
    E.Ceil: np.ceil,
    E.Round: np.round,  # half to even, as ONNX Round and torch.round
}


@evaluates(*FLOAT_FORMULAS)
def _float_formula(op, x):
    return FLOAT_FORMULAS[type(op)](f64(x))


@evaluates(E.Gelu)
def _gelu(op, x):
    v = f64(x)
    if op.approximate == "tanh":
        return 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)))
    return 0.5 * v * (1.0 + _erf(v / math.sqrt(2.0)))


@evaluates(E.Elu)
def _elu(op, x):
    v = f64(x)
    return np.where(v > 0, v, op.alpha * np.expm1(np.minimum(v, 0.0)))


@evaluates(E.Celu)
def _celu(op, x):
    v = f64(x)
    return np.maximum(v, 0.0) + np.minimum(0.0, op.alpha * np.expm1(np.minimum(v, 0.0) / op.alpha))


@evaluates(E.LeakyRelu)
def _leaky_relu(op, x):
    v = f64(x)
    return np.where(v >= 0, v, op.negative_slope * v)


@evaluates(E.Hardshrink)
def _hardshrink(op, x):
    v = f64(x)
    return np.where(np.abs(v) > op.lambd, v, 0.0)


@evaluates(E.Softshrink)
def _softshrink(op, x):
    v = f64(x)
    return np.where(v > op.lambd, v - op.lambd, np.where(v < -op.lambd, v + op.lambd, 0.0))


# ops defined on integers too: same formula, in the input's own dtype for integers
@evaluates(E.Relu)
def _relu(op, x):
    return np.maximum(x if x.dtype.kind in "iu" else f64(x), 0)


@evaluates(E.Relu6)
def _relu6(op, x):
    return np.clip(x if x.dtype.kind in "iu" else f64(x), 0, 6)


@evaluates(E.Square)
def _square(op, x):
    return x * x if x.dtype.kind in "iu" else f64(x) ** 2


@evaluates(E.Abs)
def _abs(op, x):
    return np.abs(x if x.dtype.kind in "iu" else f64(x))


@evaluates(E.Neg)
def _neg(op, x):
    return np.negative(x if x.dtype.kind in "iu" else f64(x))


@evaluates(E.Sign)
def _sign(op, x):
    return np.sign(x if x.dtype.kind in "iu" else f64(x))


@evaluates(E.IsNan)
def _isnan(op, x):
    return np.isnan(f64(x))


@evaluates(E.IsInf)
def _isinf(op, x):
    return np.isinf(f64(x))
