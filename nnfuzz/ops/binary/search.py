"""Value-search aids of the binary ops (nnfuzz/materialize/search.py): Pow's overflow loss (its
positive base is the spec's domain), surrogates of comparisons and logic, comparison ties."""
from __future__ import annotations

import torch

from nnfuzz.materialize.torch.losses import below, domain_loss, exp_limit, margin
from nnfuzz.materialize.torch.proxy import anchored, surrogate
from nnfuzz.materialize.torch.ties import compare, tie_rule
from nnfuzz.ops.binary import spec as B


@domain_loss(B.Pow)
def _pow(op, xs, dts):
    # a result whose log, y * log(x), stays below the dtype's exp limit, only where the base is
    # already positive (the domain): it must not pull the exponent towards 0 while the base is
    # still being moved
    x, y = xs[0], xs[1]
    m = margin(dts[0])
    safe = (x > m).detach()
    return below(torch.where(safe, y * torch.log(torch.clamp(x, min=m)), torch.zeros_like(x)).abs(), exp_limit(dts[0]) / 2)


@surrogate(B.Greater, B.GreaterEqual)
def _greater(op, outs, xs, args):
    return [anchored(outs[0], torch.sigmoid(xs[0] - xs[1]))]


@surrogate(B.Less, B.LessEqual)
def _less(op, outs, xs, args):
    return [anchored(outs[0], torch.sigmoid(xs[1] - xs[0]))]


@surrogate(B.Equal)
def _equal(op, outs, xs, args):
    return [anchored(outs[0], torch.sigmoid(-(xs[0] - xs[1]).abs()))]


@surrogate(B.And)
def _and(op, outs, xs, args):
    p, q = xs
    return [anchored(outs[0], p * q)]


@surrogate(B.Or)
def _or(op, outs, xs, args):
    p, q = xs
    return [anchored(outs[0], p + q - p * q)]


@surrogate(B.Xor)
def _xor(op, outs, xs, args):
    p, q = xs
    return [anchored(outs[0], p + q - 2 * p * q)]


@surrogate(B.Not)
def _not(op, outs, xs, args):
    return [anchored(outs[0], 1 - xs[0])]


tie_rule(B.Equal, B.Less, B.LessEqual, B.Greater, B.GreaterEqual)(compare)
