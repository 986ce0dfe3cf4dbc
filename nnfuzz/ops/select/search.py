"""Value-search aids of Where, Clip and Cast (nnfuzz/materialize/search.py): Cast's range loss,
Clip's proxy slope, and how Where and Cast pass surrogate gradients on."""
from __future__ import annotations

import torch

from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.torch.losses import FMAX, above, below, domain_loss, int_range
from nnfuzz.materialize.torch.proxy import anchored, proxy_gradient, soft, soft_float, surrogate
from nnfuzz.ops.select import spec as S

proxy_gradient(S.Clip, slope=0.1)  # flat outside its bounds: a leak


@domain_loss(S.Cast)
def _cast(op, xs, dts):
    src, to = dts[0], op.to
    x = xs[0]
    if src.is_float and to.is_int:
        # float-to-int of a value the target cannot hold is undefined behaviour in C
        lo, hi = int_range(to)
        lo = 0.0 if to is DType.uint8 else lo + 1
        return above(x, lo) + below(x, hi - 1)
    if src.is_int and to.is_int:
        # narrowing wraps (implementation-defined); it would also turn the gradient's way around
        lo, hi = int_range(to)
        return above(x, lo) + below(x, hi)
    if to is DType.float16 or (src is DType.float64 and to in (DType.float32, DType.bfloat16)):
        return below(x.abs(), FMAX[to] / 2)  # a value the narrower float cannot hold becomes inf
    return torch.zeros(())


@surrogate(S.Cast)
def _cast_surrogate(op, outs, xs, args):
    if outs[0].dtype == torch.bool:
        return [anchored(outs[0], torch.tanh(xs[0].abs()))]
    return [anchored(outs[0], xs[0])]  # truncation and wrapping follow the identity


@surrogate(S.Where)
def _where_surrogate(op, outs, xs, args):
    c, x, y = xs
    return [torch.where(args[0], x, y) + (c - c.detach()) * (x - y).detach()]


@soft_float(S.Cast)
def _cast_to_float(op, out, args, softs):
    return out if softs[0] is None else out + (softs[0] - softs[0].detach()).to(out.dtype)


@soft_float(S.Where)
def _where_float(op, out, args, softs):
    if softs[0] is None:
        return out
    c = softs[0]
    return out + ((c - c.detach()) * (soft(args[1], softs[1]) - soft(args[2], softs[2])).detach()).to(out.dtype)
