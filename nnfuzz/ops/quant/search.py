"""Tie rules of the quantization ops: where the real value lies within rounding of a half step, a
correct kernel may round either way (x / scale computed in float32 or as x * (1 / scale), a requantization
multiplier folded into fixed point), so the jittered float64 twin runs round such values to each side in
turn (each element to a side drawn for it: a system rounds each tie its own way, and a sum over
several moves furthest when they go different ways) and the verdict treats the step as noise (docs/quantization.md). The margin is the twin's jitter, or
``MARGIN`` (relative) where that is smaller: the integer kernels get no jitter of their own."""
from __future__ import annotations

import torch

from nnfuzz.materialize.torch.ties import tie_rule
from nnfuzz.ops.quant import spec as Q
from nnfuzz.ops.quant import torch as QT

MARGIN = 2.0 ** -16  # a few float32 ulps of a value computed in float32 on the way to the grid


def _nudged(v, eps, side, rng):
    """``v`` (real values in steps) moved by the larger margin: toward ``side``, or with ``rng`` (a twin run's
    generator), in half of the runs, each element toward a side drawn for it."""
    m = max(eps, MARGIN)
    if rng is not None and rng.random() < 0.5:  # else every element toward ``side``: a system may round all
        side = torch.from_numpy(rng.choice([-1.0, 1.0], size=tuple(v.shape))).to(v.dtype)  # its ties one way
    return v + side * m * (v.abs() + 0.5)


@tie_rule(Q.QuantizeLinear, with_op=True)
def _quantize(op, xs, outs, eps, side, rng=None):
    x = xs[0]
    v = x / QT._scales(op, x, x.dtype)
    return [QT.quantize_steps(_nudged(v, eps, side, rng), op).to(outs[0].dtype)]


@tie_rule(Q.DynamicQuantizeLinear, with_op=True)
def _dynamic(op, xs, outs, eps, side, rng=None):
    """Its zero point ``round(-min / scale)`` is a tie of its own: a tanh that reaches -1 in float32 gives
    the real zero point 127.5 (ORT's Tanh is 1 ulp below -1: 128, torch's float32 127), and every y moves
    with it (ort-cpu's dynamic-auto 0019 was saved as 2 values off, where the two ties cancelled)."""
    y, scale, zp = outs
    x = xs[0]
    lo = torch.clamp(x.min(), max=0.0)
    zp = torch.clamp(torch.round(_nudged(-lo / scale, eps, side, rng)), 0, 255).to(zp.dtype)
    v = x / scale
    return [torch.clamp(torch.round(_nudged(v, eps, side, rng)) + zp.to(v.dtype), 0, 255).to(y.dtype), scale, zp]


@tie_rule(Q.QLinearMatMul, with_op=True)
def _qlinear_matmul(op, xs, outs, eps, side, rng=None):
    a, b = xs
    acc = torch.matmul(QT._centered(a, op.a_zero_point), QT._centered(b, op.b_zero_point))
    return [_requantized(acc.double() * QT.matmul_multiplier(op, acc.device), op, eps, side, rng).to(outs[0].dtype)]


@tie_rule(Q.QLinearConv, with_op=True)
def _qlinear_conv(op, xs, outs, eps, side, rng=None):
    x, w = xs
    acc = QT._int_conv(op, QT._centered(x, op.x_zero_point), w.long())
    return [_requantized(acc * QT.conv_multiplier(op, w.shape[0], acc.device), op, eps, side, rng).to(outs[0].dtype)]


def _requantized(v, op, eps, side, rng):
    return QT._saturate(torch.round(_nudged(v, eps, side, rng)) + int(op.y_zero_point), op.to)
