"""Value-range rules and domains of the built-in operators (see nnfuzz/abstract/ranges.py)."""
from __future__ import annotations

import math

import numpy as np

from nnfuzz.abstract.ops import binary as B
from nnfuzz.abstract.ops import combine as C
from nnfuzz.abstract.ops import conv as CV
from nnfuzz.abstract.ops import elementwise as E
from nnfuzz.abstract.ops import layout as L
from nnfuzz.abstract.ops import norm as N
from nnfuzz.abstract.ops import pad as P
from nnfuzz.abstract.ops import pool as PO
from nnfuzz.abstract.ops import reduce as R
from nnfuzz.abstract.ops import resize as RS
from nnfuzz.abstract.ops import select as S
from nnfuzz.abstract.ops import tfonly as T
from nnfuzz.abstract.ranges import INF, SAME_INPUTS, UNIT, UNKNOWN, VRange, domain, value_range

# ---- domains: every element of the input must lie in them -------------------------------------
domain(E.Log, E.Log2, E.Rsqrt, lo=0.0, lo_open=True)
domain(E.Sqrt, lo=0.0)
domain(E.Log1p, lo=-1.0, lo_open=True)
domain(E.Asin, E.Acos, lo=-1.0, hi=1.0)
domain(E.Reciprocal, nonzero=True)
domain(B.Div, B.Fmod, T.FloorMod, index=1, nonzero=True)
domain(B.Pow, lo=0.0, lo_open=True)


# ---- elementwise ---------------------------------------------------------------------------
def _f(fn, x: float) -> float:
    with np.errstate(all="ignore"):
        return float(fn(np.float64(x)))


def monotone(fn, lo: float = -INF, hi: float = INF, decreasing: bool = False):
    """The rule of an elementwise ``fn`` monotone over the reals, with image within [lo, hi]."""
    def clip(v, fallback):
        return fallback if math.isnan(v) else min(max(v, lo), hi)

    def rule(op, rs, ts):
        r = rs[0]
        f = (lambda x: _f(lambda v: fn(op, v), x))
        a, b = clip(f(r.lo), lo), clip(f(r.hi), hi)
        m, M = f(r.min_ub), f(r.max_lb)
        if decreasing:
            a, b = clip(f(r.hi), lo), clip(f(r.lo), hi)
            m, M = f(r.max_lb), f(r.min_ub)
        out = VRange(a, b, INF if math.isnan(m) else m, -INF if math.isnan(M) else M)
        if r.has_zero:
            z = f(0.0)
            out = out if math.isnan(z) else out.hull(z)
        return out

    return rule


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(0.0, x)


value_range(E.Relu)(monotone(lambda op, x: np.maximum(x, 0), 0.0))
value_range(E.Relu6)(monotone(lambda op, x: np.clip(x, 0, 6), 0.0, 6.0))
value_range(E.Sigmoid)(monotone(lambda op, x: _sigmoid(x), 0.0, 1.0))
value_range(E.Tanh)(monotone(lambda op, x: np.tanh(x), -1.0, 1.0))
value_range(E.Softplus)(monotone(lambda op, x: _softplus(x), 0.0))
value_range(E.Elu, E.Celu)(monotone(lambda op, x: np.where(x > 0, x, op.alpha * np.expm1(np.minimum(x / (op.alpha if isinstance(op, E.Celu) else 1.0), 0))), -2.0))
SELU_SCALE, SELU_ALPHA = 1.0507009873554805, 1.6732632423543772  # torch's constants, exactly
value_range(E.Selu)(monotone(lambda op, x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0))),
                             -1.7581))
value_range(E.HardSigmoid)(monotone(lambda op, x: np.clip(x / 6 + 0.5, 0, 1), 0.0, 1.0))
value_range(E.LeakyRelu)(monotone(lambda op, x: np.where(x > 0, x, op.negative_slope * x)))
value_range(E.Softsign)(monotone(lambda op, x: x / (1 + np.abs(x)) if np.isfinite(x) else np.sign(x), -1.0, 1.0))
# Deliberately strictly negative: logsigmoid(x) rounds to 0 only in its saturated tail (x >= 103 in
# float32, 17 in float16, 745 in float64). The analysis treats that tail as unreachable, so that
# e.g. sqrt(logsigmoid(x)) is not generated: its only finite values sit at the edge of a rounding.
value_range(E.LogSigmoid)(monotone(lambda op, x: -_softplus(-x), -INF, -1e-300))
value_range(E.Tanhshrink)(monotone(lambda op, x: x - np.tanh(x)))
value_range(E.Exp)(monotone(lambda op, x: np.exp(x), 0.0))
value_range(E.Log)(monotone(lambda op, x: np.log(x)))
value_range(E.Log2)(monotone(lambda op, x: np.log2(x)))
value_range(E.Log1p)(monotone(lambda op, x: np.log1p(x)))
value_range(E.Sqrt)(monotone(lambda op, x: np.sqrt(x), 0.0))
value_range(E.Rsqrt)(monotone(lambda op, x: 1 / np.sqrt(x), 0.0, decreasing=True))
value_range(E.Erf)(monotone(lambda op, x: math.erf(x), -1.0, 1.0))
value_range(E.Asin)(monotone(lambda op, x: np.arcsin(x), -math.pi / 2, math.pi / 2))
value_range(E.Acos)(monotone(lambda op, x: np.arccos(x), 0.0, math.pi, decreasing=True))
value_range(E.Atan)(monotone(lambda op, x: np.arctan(x), -math.pi / 2, math.pi / 2))
value_range(E.Floor)(monotone(lambda op, x: np.floor(x)))
value_range(E.Ceil)(monotone(lambda op, x: np.ceil(x)))
value_range(E.Round)(monotone(lambda op, x: np.round(x)))
value_range(E.Sign)(monotone(lambda op, x: np.sign(x), -1.0, 1.0))
value_range(E.Hardshrink)(monotone(lambda op, x: np.where(np.abs(x) > op.lambd, x, 0.0)))
value_range(E.Softshrink)(monotone(lambda op, x: np.sign(x) * np.maximum(np.abs(x) - op.lambd, 0.0)))
value_range(E.Neg)(monotone(lambda op, x: -x, decreasing=True))
value_range(S.Clip)(monotone(lambda op, x: np.clip(x, op.min, op.max)))
value_range(E.Sin, E.Cos)(lambda op, rs, ts: VRange(-1.0, 1.0))

# not monotonic, but bounded below by their minimum (at x_min) and increasing right of it
# (minima rounded down; gelu's covers its tanh approximation too, whose minimum is -0.1700408)
_DIPS = {E.Mish: (-1.1924, -0.30885), E.Silu: (-1.2785, -0.27847), E.Gelu: (-0.7518, -0.17005),
         E.HardSwish: (-1.5, -0.375)}


@value_range(*_DIPS)
def _dip(op, rs, ts):
    r = rs[0]
    lo = 0.0 if r.lo >= 0 else _DIPS[type(op)][1]
    return VRange(lo, max(r.hi, 0.0), zero=r.has_zero)  # f(x) <= x for x >= 0 and f(x) <= 0 below


@value_range(E.Abs, E.Square)
def _even(op, rs, ts):
    r = rs[0]
    sq = isinstance(op, E.Square)
    g = (lambda v: v * v) if sq else abs
    lo = 0.0 if r.lo <= 0 <= r.hi else min(g(r.lo), g(r.hi))
    big = max(r.max_lb if r.max_lb > 0 else 0.0, -r.min_ub if r.min_ub < 0 else 0.0)
    return VRange(lo, max(g(r.lo), g(r.hi)), max_lb=g(big), zero=r.has_zero)


@value_range(E.Reciprocal)
def _reciprocal(op, rs, ts):
    r = rs[0]
    if r.lo > 0 or r.hi < 0:  # one sign: decreasing
        return VRange(1 / r.hi if r.hi not in (0, INF) else 0.0, 1 / r.lo if r.lo not in (0, -INF) else 0.0)
    return UNKNOWN


@value_range(E.IsNan, E.IsInf)
def _never(op, rs, ts):
    return VRange(0.0, 0.0, zero=True)  # in a graph with a defined result no value is NaN or inf


value_range(B.Equal, B.Greater, B.Less, B.GreaterEqual, B.LessEqual, B.And, B.Or, B.Xor, B.Not)(
    lambda op, rs, ts: UNIT)


@value_range(S.Cast)
def _cast(op, rs, ts):
    if op.to.value == "bool":
        return UNIT
    if op.to.is_int:  # truncation towards zero is monotone; out-of-range values are UB anyway
        return monotone(lambda o, x: np.trunc(x))(op, rs, ts)
    return rs[0]


# ---- binary ----------------------------------------------------------------------------------
def _products(a, b):
    with np.errstate(all="ignore"):
        ps = [float(np.float64(x) * np.float64(y)) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    ps = [p for p in ps if not math.isnan(p)]
    return VRange(min(ps), max(ps)) if len(ps) == 4 else UNKNOWN


@value_range(B.Add, B.Sub, B.Mul, B.Div, B.Max, B.Min, B.Pow, B.Fmod)
def _binary(op, rs, ts):
    a, b = rs
    if isinstance(op, B.Add):
        return VRange(a.lo + b.lo, a.hi + b.hi) if math.isfinite(a.lo + b.lo) or math.isfinite(a.hi + b.hi) else UNKNOWN
    if isinstance(op, B.Sub):
        return VRange(a.lo - b.hi, a.hi - b.lo)
    # (a zero element of x stays zero in x * y and x / y: broadcasting only repeats it, and y is
    # finite, and non-zero for a division, wherever the result is defined)
    if isinstance(op, B.Mul):
        out = _products(a, b)
        return out.hull(0.0) if a.has_zero or b.has_zero else out
    if isinstance(op, B.Div):
        out = UNKNOWN
        if b.lo > 0 or b.hi < 0:
            out = _products(a, VRange(min(1 / b.lo, 1 / b.hi), max(1 / b.lo, 1 / b.hi)))
        return out.hull(0.0) if a.has_zero else out
    if isinstance(op, B.Max):
        return VRange(max(a.lo, b.lo), max(a.hi, b.hi), max_lb=max(a.max_lb, b.max_lb))
    if isinstance(op, B.Min):
        return VRange(min(a.lo, b.lo), min(a.hi, b.hi), min_ub=min(a.min_ub, b.min_ub))
    if isinstance(op, B.Pow):
        return VRange(0.0, INF)  # its domain is a positive base
    m = max(abs(b.lo), abs(b.hi))  # fmod: |result| < |y|, with x's sign
    return VRange(0.0 if a.lo >= 0 else -m, 0.0 if a.hi <= 0 else m)


ZERO = VRange(0.0, 0.0, 0.0, 0.0, True)
SAME_INPUTS.update({B.Sub: ZERO, B.Fmod: ZERO, B.Xor: ZERO, B.Div: VRange(1.0, 1.0, 1.0, 1.0),
                    B.Equal: VRange(1.0, 1.0, 1.0, 1.0), B.Greater: ZERO, B.Less: ZERO,
                    B.GreaterEqual: VRange(1.0, 1.0, 1.0, 1.0), B.LessEqual: VRange(1.0, 1.0, 1.0, 1.0)})


@value_range(T.SquaredDifference, T.FloorMod, T.DivNoNan)
def _tf_binary(op, rs, ts):
    a, b = rs
    if isinstance(op, T.SquaredDifference):  # the square of the difference's range
        lo, hi = a.lo - b.hi, a.hi - b.lo
        return VRange(0.0 if lo <= 0 <= hi else min(lo * lo, hi * hi), max(lo * lo, hi * hi))
    if isinstance(op, T.FloorMod):  # the result lies between 0 and y (inclusive: x mod y may round to y)
        out = VRange(min(b.lo, 0.0), max(b.hi, 0.0))
        return out.hull(0.0) if a.has_zero else out  # 0 mod y is 0 (y is non-zero: the domain)
    # DivNoNan: Div's range where y cannot be 0; 0 wherever y is 0, or x is 0
    out = _binary(B.Div(), rs, ts) if b.lo > 0 or b.hi < 0 else UNKNOWN
    return out.hull(0.0) if a.has_zero or b.has_zero else out


# x - x is 0, and x mod x too (fmod(x, x) is exactly +-0, and 0 needs no sign fix); DivNoNan(x, x) is
# 1 except where x is 0
SAME_INPUTS.update({T.SquaredDifference: ZERO, T.FloorMod: ZERO})


@value_range(S.Where)
def _where(op, rs, ts):
    x, y = rs[1], rs[2]
    return VRange(min(x.lo, y.lo), max(x.hi, y.hi))


# ---- reductions ------------------------------------------------------------------------------
def _n(op, ts) -> int:
    return int(ts[0].shape[op.axis]) if ts[0].ndims else 1


@value_range(R.ReduceMax, R.ReduceMin, R.ReduceMean, R.ReduceSum, R.ReduceProd, R.ReduceL1, R.ReduceL2,
             R.LogSumExp, R.ArgMax, R.ArgMin, R.Softmax, R.LogSoftmax, R.CumSum)
def _reduce(op, rs, ts):
    r, n = rs[0], _n(op, ts)
    if n == 0:
        return UNKNOWN
    if n == 1 and isinstance(op, (R.ReduceMax, R.ReduceMin, R.ReduceMean, R.ReduceSum, R.CumSum, R.ReduceProd)):
        return r  # over a single element: the values themselves
    if n == 1 and isinstance(op, (R.ReduceL1, R.ReduceL2)):
        return _even(E.Abs(), rs, ts)
    if n == 1 and isinstance(op, (R.Softmax, R.LogSoftmax)):  # over one element: exactly 1 (log: 0)
        v = 1.0 if isinstance(op, R.Softmax) else 0.0
        return VRange(v, v, v, v, v == 0)
    big = max(abs(r.lo), abs(r.hi))
    if isinstance(op, R.ReduceMax):
        return VRange(r.lo, r.hi, max_lb=r.max_lb)
    if isinstance(op, R.ReduceMin):
        return VRange(r.lo, r.hi, min_ub=r.min_ub)
    if isinstance(op, R.ReduceMean):
        return r.interval()
    if isinstance(op, (R.ReduceSum, R.CumSum)):
        return VRange(min(r.lo, n * r.lo), max(r.hi, n * r.hi))
    if isinstance(op, R.ReduceProd):  # a product over a slice holding a zero is zero
        out = (UNIT if r.hi <= 1 else VRange(0.0, INF)) if r.lo >= 0 else UNKNOWN
        return out.hull(0.0) if r.has_zero else out
    if isinstance(op, R.ReduceL1):
        return VRange(0.0, n * big)
    if isinstance(op, R.ReduceL2):
        return VRange(0.0, math.sqrt(n) * big)
    if isinstance(op, R.LogSumExp):
        return VRange(r.lo, r.hi + math.log(n))
    if isinstance(op, (R.ArgMax, R.ArgMin)):
        return VRange(0.0, n - 1.0)
    if isinstance(op, R.Softmax):
        return VRange(0.0, 1.0, 1.0 / n, 1.0 / n)
    return VRange(-INF, 0.0, -math.log(n), -math.log(n))  # LogSoftmax


# ---- data movement: every element kept (maybe repeated) / some elements kept ---------------------
@value_range(L.Reshape, L.Flatten, L.Transpose, L.Permute, L.Squeeze, L.Unsqueeze, L.Expand, L.Tile,
             L.DepthToSpace, L.SpaceToDepth, L.Flip, L.Roll)
def _same(op, rs, ts):
    return rs[0] if all(int(d) > 0 for d in ts[0].shape) or not ts[0].ndims else rs[0].interval()


@value_range(C.Slice, C.Gather, C.Split, PO.MaxPool1d, PO.MaxPool2d, PO.MaxPool3d, PO.GlobalMaxPool,
             PO.GlobalAvgPool, PO.AdaptiveAvgPool2d, PO.AdaptiveMaxPool2d, RS.ResizeNearest, RS.ResizeLinear)
def _subset(op, rs, ts):
    out = rs[0].interval()
    return [out] * len(op.sizes) if isinstance(op, C.Split) else out


@value_range(PO.AvgPool1d, PO.AvgPool2d, PO.AvgPool3d)
def _avg_pool(op, rs, ts):
    return VRange(min(rs[0].lo, 0.0), max(rs[0].hi, 0.0))  # zero padding may be averaged in


@value_range(C.Concat)
def _concat(op, rs, ts):
    return VRange(min(r.lo for r in rs), max(r.hi for r in rs), min(r.min_ub for r in rs),
                  max(r.max_lb for r in rs), any(r.has_zero for r in rs))


@value_range(L.Tril, L.Triu)
def _triangle(op, rs, ts):
    r = VRange(min(rs[0].lo, 0.0), max(rs[0].hi, 0.0))
    rows, cols = int(ts[0].shape[-2]), int(ts[0].shape[-1])
    if rows * cols == 0:
        return r
    d = op.diagonal
    zeroed = d < cols - 1 if isinstance(op, L.Tril) else d > 1 - rows
    return r.hull(0.0) if zeroed else r


@value_range(P.ConstantPad, P.ReflectPad, P.ReplicatePad, P.CircularPad)
def _pad(op, rs, ts):
    r = rs[0] if all(p >= 0 for p in op.pads) else rs[0].interval()
    if isinstance(op, P.ConstantPad) and any(p > 0 for p in op.pads):
        return r.hull(float(op.value))
    return r


def _numel(dims) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


@value_range(N.LayerNorm)
def _layer_norm(op, rs, ts):
    n = _numel(ts[0].shape[ts[0].ndims - op.k:])
    if n == 1:  # each element is its own mean: 0, then the bias
        return rs[2] if op.affine else VRange(0.0, 0.0, 0.0, 0.0, True)
    if op.affine:
        return UNKNOWN
    return VRange(min_ub=0.0, max_lb=0.0)  # zero mean: some element <= 0 and some >= 0


@value_range(N.InstanceNorm, N.GroupNorm)
def _channel_norm(op, rs, ts):
    x = ts[0]
    group = _numel(x.shape[2:]) * (int(x.shape[1]) // op.groups if isinstance(op, N.GroupNorm) else 1)
    return rs[2] if group == 1 and _numel(x.shape) else UNKNOWN  # one element per group: the bias


# ---- convolutions: output positions that no input position reaches are exactly 0 -------------------
def _gap(out_size: int, hits) -> bool:
    return len({o for o in hits if 0 <= o < out_size}) < out_size


@value_range(CV.Conv1d, CV.Conv2d, CV.Conv3d, CV.ConvTranspose1d, CV.ConvTranspose2d, CV.ConvTranspose3d)
def _conv(op, rs, ts):
    x, w = ts[0], ts[1]
    transposed = isinstance(op, CV.ConvTransposeNd)
    out = op.type_transfer([x, w])[0]
    for k, (size, ks, s, p, d) in enumerate(zip(x.shape[2:], w.shape[2:], op.stride, op.padding, op.dilation)):
        size, ks, o_size = int(size), int(ks), int(out.shape[2 + k])
        if size * ks > 100000 or o_size * ks > 100000 or not (size and ks and o_size):
            continue
        if transposed:
            hits = (i * s - p + j * d for i in range(size) for j in range(ks))
        else:  # output o reads input o*s - p + j*d; all of them in the padding: 0
            hits = (o for o in range(o_size) if any(0 <= o * s - p + j * d < size for j in range(ks)))
        if _gap(o_size, hits) and _numel(out.shape):
            return VRange(zero=True)
    return UNKNOWN
