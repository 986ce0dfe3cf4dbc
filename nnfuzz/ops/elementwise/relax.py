"""Relax lowerings of the elementwise unary ops: a ``relax.op`` where Relax has the function, else the
torch formula composed of Relax ops (each says which)."""
import math

from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_each, relax_lowers
from nnfuzz.ops.elementwise import spec as E

relax_each({
    E.Relu: R.nn.relu,
    E.Relu6: R.nn.relu6,
    E.Sigmoid: R.sigmoid,
    E.Tanh: R.tanh,
    E.Softplus: R.nn.softplus,  # beta 1, threshold 20: torch's defaults
    E.Selu: R.nn.selu,
    E.Silu: R.nn.silu,
    E.Exp: R.exp,
    E.Log: R.log,
    E.Sqrt: R.sqrt,
    E.Rsqrt: R.rsqrt,
    E.Erf: R.erf,
    E.Square: R.square,
    E.Sin: R.sin,
    E.Cos: R.cos,
    E.Tan: R.tan,
    E.Asin: R.asin,
    E.Acos: R.acos,
    E.Atan: R.atan,
    E.Abs: R.abs,
    E.Neg: R.negative,
    E.Sign: R.sign,
    E.Floor: R.floor,
    E.Ceil: R.ceil,
    E.Round: R.round,
    E.IsNan: R.isnan,
    E.IsInf: R.isinf,
})


@relax_lowers(E.Gelu)
def _gelu(op, g, x):
    return R.nn.gelu_tanh(x) if op.approximate == "tanh" else R.nn.gelu(x)


@relax_lowers(E.Log2)
def _log2(op, g, x):
    return R.divide(R.log(x), g.scalar(math.log(2.0), x))  # torch's: log(x) / ln 2


@relax_lowers(E.Log1p)
def _log1p(op, g, x):
    return R.log(R.add(x, g.scalar(1, x)))  # Relax has no log1p


@relax_lowers(E.Reciprocal)
def _reciprocal(op, g, x):
    return R.divide(g.scalar(1, x), x)


@relax_lowers(E.Elu)
def _elu(op, g, x):
    neg = R.multiply(g.scalar(op.alpha, x), R.subtract(R.exp(R.minimum(x, g.scalar(0, x))), g.scalar(1, x)))
    return R.where(R.greater(x, g.scalar(0, x)), x, neg)


@relax_lowers(E.Celu)
def _celu(op, g, x):
    a = g.scalar(op.alpha, x)
    neg = R.multiply(a, R.subtract(R.exp(R.divide(R.minimum(x, g.scalar(0, x)), a)), g.scalar(1, x)))
    return R.add(R.nn.relu(x), R.minimum(g.scalar(0, x), neg))


@relax_lowers(E.LeakyRelu)
def _leaky_relu(op, g, x):
    return R.nn.leakyrelu(x, float(op.negative_slope))


@relax_lowers(E.HardSwish)
def _hard_swish(op, g, x):
    return R.divide(R.multiply(x, R.clip(R.add(x, g.scalar(3, x)), 0.0, 6.0)), g.scalar(6, x))


@relax_lowers(E.HardSigmoid)
def _hard_sigmoid(op, g, x):
    return R.clip(R.add(R.divide(x, g.scalar(6, x)), g.scalar(0.5, x)), 0.0, 1.0)


@relax_lowers(E.Mish)
def _mish(op, g, x):
    return R.multiply(x, R.tanh(R.nn.softplus(x)))


@relax_lowers(E.Softsign)
def _softsign(op, g, x):
    return R.divide(x, R.add(g.scalar(1, x), R.abs(x)))


@relax_lowers(E.LogSigmoid)
def _log_sigmoid(op, g, x):
    # min(x, 0) - log(1 + e^-|x|), stable in both tails like the torch lowering
    tail = R.log(R.add(g.scalar(1, x), R.exp(R.negative(R.abs(x)))))
    return R.subtract(R.minimum(x, g.scalar(0, x)), tail)


@relax_lowers(E.Tanhshrink)
def _tanhshrink(op, g, x):
    return R.subtract(x, R.tanh(x))


@relax_lowers(E.Hardshrink)
def _hardshrink(op, g, x):
    return R.where(R.greater(R.abs(x), g.scalar(op.lambd, x)), x, g.scalar(0, x))


@relax_lowers(E.Softshrink)
def _softshrink(op, g, x):
    lam = g.scalar(op.lambd, x)
    inner = R.where(R.less(x, R.negative(lam)), R.add(x, lam), g.scalar(0, x))
    return R.where(R.greater(x, lam), R.subtract(x, lam), inner)
