import torch
import torch.nn.functional as F

from nnfuzz.abstract.ops import elementwise as E
from nnfuzz.materialize.torch.lowering import lower_each, lowers

lower_each({
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
    E.LogSigmoid: F.logsigmoid,
    E.Tanhshrink: F.tanhshrink,
    E.Exp: torch.exp,
    E.Log: torch.log,
    E.Log2: torch.log2,
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
})


@lowers(E.Gelu)
def _gelu(op, x):
    return F.gelu(x, approximate=op.approximate)


@lowers(E.Elu)
def _elu(op, x):
    return F.elu(x, op.alpha)


@lowers(E.Celu)
def _celu(op, x):
    return F.celu(x, op.alpha)


@lowers(E.LeakyRelu)
def _leaky_relu(op, x):
    return F.leaky_relu(x, op.negative_slope)


@lowers(E.Hardshrink)
def _hardshrink(op, x):
    return F.hardshrink(x, op.lambd)


@lowers(E.Softshrink)
def _softshrink(op, x):
    return F.softshrink(x, op.lambd)
