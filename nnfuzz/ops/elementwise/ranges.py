"""Value-range rules of the elementwise ops (see nnfuzz/abstract/ranges.py); their domains are on the
spec classes. The float formulas are the reference evals' own (nnfuzz/ops/elementwise/numpy.py)."""
from __future__ import annotations

import math

import numpy as np

from nnfuzz.abstract.ranges import INF, UNKNOWN, VRange, monotone, value_range
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.ops.elementwise.numpy import selu, sigmoid, softplus

value_range(E.Relu)(monotone(lambda op, x: np.maximum(x, 0), 0.0))
value_range(E.Relu6)(monotone(lambda op, x: np.clip(x, 0, 6), 0.0, 6.0))
value_range(E.Sigmoid)(monotone(lambda op, x: sigmoid(x), 0.0, 1.0))
value_range(E.Tanh)(monotone(lambda op, x: np.tanh(x), -1.0, 1.0))
value_range(E.Softplus)(monotone(lambda op, x: softplus(x), 0.0))
value_range(E.Elu, E.Celu)(monotone(lambda op, x: np.where(x > 0, x, op.alpha * np.expm1(np.minimum(x / (op.alpha if isinstance(op, E.Celu) else 1.0), 0))), -2.0))
value_range(E.Selu)(monotone(lambda op, x: selu(x), -1.7581))
value_range(E.HardSigmoid)(monotone(lambda op, x: np.clip(x / 6 + 0.5, 0, 1), 0.0, 1.0))
value_range(E.LeakyRelu)(monotone(lambda op, x: np.where(x > 0, x, op.negative_slope * x)))
value_range(E.Softsign)(monotone(lambda op, x: x / (1 + np.abs(x)) if np.isfinite(x) else np.sign(x), -1.0, 1.0))
# Deliberately strictly negative: logsigmoid(x) rounds to 0 only in its saturated tail (x >= 103 in
# float32, 17 in float16, 745 in float64). The analysis treats that tail as unreachable, so that
# e.g. sqrt(logsigmoid(x)) is not generated: its only finite values sit at the edge of a rounding.
value_range(E.LogSigmoid)(monotone(lambda op, x: -softplus(-x), -INF, -1e-300))
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
def even(op, rs, ts):
    """|x| or x*x: the image of the input's range under an even function increasing right of 0."""
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
