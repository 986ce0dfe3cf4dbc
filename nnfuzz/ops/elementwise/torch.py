import math

import torch
import torch.nn.functional as F

from nnfuzz.ops.elementwise import spec as E
from nnfuzz.materialize.torch.lowering import lower_each, lowers
from nnfuzz.ops.binary.torch import f64_scalar_safe

LN2 = math.log(2.0)

# Every lowering goes through f64_scalar_safe: ops the exporter decomposes (Gelu, Log2, Silu, ...)
# would otherwise give a 0-d float64 input a float32 result in ONNX.
lower_each({cls: f64_scalar_safe(fn) for cls, fn in {
    E.Relu: torch.relu,
    E.Relu6: F.relu6,
    E.Sigmoid: torch.sigmoid,
    E.Tanh: torch.tanh,
    E.Softplus: F.softplus,
    E.Selu: F.selu,
    E.HardSwish: F.hardswish,
    E.HardSigmoid: F.hardsigmoid,
    E.Mish: F.mish,
    E.Silu: F.silu,
    E.Softsign: F.softsign,
    E.Tanhshrink: F.tanhshrink,
    E.Exp: torch.exp,
    E.Log: torch.log,
    # torch.onnx writes log2 as Log(x) / ln2 with ln2 rounded to float32 even for float64 (log2(4) =
    # 1.99999999 in ORT, and a Floor after it a false bug): the same formula with an exact constant
    E.Log2: lambda x: torch.log(x) / LN2,
    E.Log1p: torch.log1p,
    E.Sqrt: torch.sqrt,
    E.Rsqrt: torch.rsqrt,
    E.Reciprocal: torch.reciprocal,
    E.Erf: torch.erf,
    E.Square: torch.square,
    E.Sin: torch.sin,
    E.Cos: torch.cos,
    E.Tan: torch.tan,
    E.Asin: torch.asin,
    E.Acos: torch.acos,
    E.Atan: torch.atan,
    E.Abs: torch.abs,
    E.Neg: torch.neg,
    E.Sign: torch.sign,
    E.Floor: torch.floor,
    E.Ceil: torch.ceil,
    E.Round: torch.round,
    E.IsNan: torch.isnan,
    E.IsInf: torch.isinf,
}.items()})


@lowers(E.Gelu)
def _gelu(op, x):
    return f64_scalar_safe(lambda v: F.gelu(v, approximate=op.approximate))(x)


@lowers(E.Elu)
def _elu(op, x):
    return f64_scalar_safe(lambda v: F.elu(v, op.alpha))(x)


@lowers(E.Celu)
def _celu(op, x):
    return f64_scalar_safe(lambda v: F.celu(v, op.alpha))(x)


@lowers(E.LeakyRelu)
def _leaky_relu(op, x):
    return f64_scalar_safe(lambda v: F.leaky_relu(v, op.negative_slope))(x)


@lowers(E.Hardshrink)
def _hardshrink(op, x):
    return f64_scalar_safe(lambda v: F.hardshrink(v, op.lambd))(x)


@lowers(E.Softshrink)
def _softshrink(op, x):
    return f64_scalar_safe(lambda v: F.softshrink(v, op.lambd))(x)


def _log_sigmoid(x):
    # min(x, 0) - log(1 + e^-|x|): the exporter writes F.logsigmoid as Log(Sigmoid(x)), which
    # underflows to -inf in float32 below x = -88 and loses precision well before; this form exports
    # as Relu/Abs/Exp/Log ops that every runtime has and stays accurate everywhere
    # (x - relu(x) is min(x, 0) exactly, without a zeros constant, which bfloat16 cannot export)
    return (x - torch.relu(x)) - torch.log1p(torch.exp(-torch.abs(x)))


lower_each({E.LogSigmoid: f64_scalar_safe(_log_sigmoid)})
