"""Value-search aids of the elementwise ops (nnfuzz/materialize/search.py): losses beyond the ones
derived from the specs' domains, proxy slopes, surrogates and tie rules."""
from __future__ import annotations

import math

import torch

from nnfuzz.materialize.torch.losses import FMAX, above, below, domain_loss, exp_limit, margin
from nnfuzz.materialize.torch.proxy import no_surrogate, proxy_gradient, surrogate
from nnfuzz.materialize.torch.ties import at_jumps, shifted, tie_rule
from nnfuzz.ops.elementwise import spec as E


@domain_loss(E.Exp, E.Softplus, E.Mish)
def _exp(op, xs, dts):
    # softplus and mish are exp-based in ONNX (log(exp(x) + 1)); torch's threshold hides the overflow
    return below(xs[0], exp_limit(dts[0]))


@domain_loss(E.Tan)
def _tan(op, xs, dts):
    # away from the poles at pi/2 + k*pi, where cos(x) vanishes
    return above(torch.cos(xs[0]).abs(), 10 * margin(dts[0]))


@domain_loss(E.Square)
def _square(op, xs, dts):
    if dts[0].is_float:
        return below(xs[0].abs(), math.sqrt(FMAX[dts[0]]) / 2)
    return torch.zeros(())  # integer overflow: every integer op's result is checked by the search


# stepped, or not monotonic (mish, silu and gelu fall left of their minimum and would pull values
# further left): follow the identity instead
proxy_gradient(E.Floor, E.Ceil, E.Round, E.Sign, E.Mish, E.Silu, E.Gelu, E.HardSwish, slope=1.0, replace=True)
# flat outside a region, or saturating (a vanishing gradient, exactly zero in float16): a leak
proxy_gradient(E.Relu, E.Relu6, E.HardSigmoid, E.Hardshrink, E.Softshrink, E.Sigmoid, E.Tanh,
               E.Softsign, E.Erf, E.Atan, E.LogSigmoid, E.Softplus, E.Elu, E.Celu, E.Selu, E.Tanhshrink,
               slope=0.1)

surrogate(E.IsNan, E.IsInf)(no_surrogate)

tie_rule(E.Floor)(shifted(torch.floor))
tie_rule(E.Ceil)(shifted(torch.ceil))
tie_rule(E.Round)(shifted(torch.round))
tie_rule(E.Hardshrink, with_op=True)(at_jumps)  # 0 up to lambd, then x


@tie_rule(E.Sign)
def _sign(xs, out, eps, side):
    return torch.sign(xs[0] + side * eps * (xs[0].abs().max() + 1e-30)).to(out.dtype)
