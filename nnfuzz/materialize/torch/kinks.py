"""The value search's kink loss (``search.kinks``, set for oracle=grad): derived from each op class's
``kinks`` (nnfuzz/abstract/kink.py), zero when every element of each input lies a margin away from each of
the op's kink points (or is exactly on one: see kink.py), else the distance still to go.

The margin is relative, ``KINK_MARGIN[dtype] * (1 + |kink|)``: far beyond the rounding any system adds to
a value computed before the op (a few ulps, grown by the graph's conditioning), so that no system's value
lands on the other side of the kink from torch eager's and takes the other one-sided derivative.
"""
from __future__ import annotations

import functools
from typing import Callable, Optional

import numpy as np
import torch

from nnfuzz.abstract.dtype import DType

KINK_MARGIN = {DType.float16: 3e-2, DType.bfloat16: 1e-1, DType.float32: 1e-3, DType.float64: 1e-6}


def near(d: torch.Tensor, room) -> torch.Tensor:
    """Zero where every distance ``d`` is 0 (exactly on the kink) or at least ``room``; else the total
    distance still to go (its gradient pushes each such element away from the kink)."""
    close = ((d > 0) & (d < room)).detach()
    return (torch.relu(room - d) * close).sum()


def kink_term(op, kink, x, xs, dt: DType) -> torch.Tensor:
    """The loss of input ``x``'s ``kink`` (``xs``: all the op's inputs as float tensors; ``dt``: x's dtype)."""
    m = KINK_MARGIN.get(dt, 0.0)
    total = torch.zeros((), dtype=x.dtype)
    for p in kink.points_of(op):
        total = total + near((x - p).abs(), m * (1 + abs(p)))
    if kink.period > 0:
        shifted = x - kink.offset
        d = (shifted - torch.round(shifted.detach() / kink.period) * kink.period).abs()
        total = total + near(d, m * (1 + x.detach().abs()))
    if 0 <= kink.ties_with < len(xs):
        a, b = torch.broadcast_tensors(x, xs[kink.ties_with])
        total = total + near((a - b).abs(), m * (1 + a.detach().abs() + b.detach().abs()))
    if 0 <= kink.ratio_with < len(xs):
        q = _quotient(x, xs[kink.ratio_with])
        d = (q - torch.round(q.detach())).abs()
        total = total + near(d, m * (1 + q.detach().abs()))
    if kink.ranked:
        total = total + ranked_term(op, kink, x, m).to(total.dtype)
    return total


def ranked_term(op, kink, x, m: float) -> torch.Tensor:
    """The loss of a ranked kink (kink.py): in each group of ``x``, each of the ``top`` leading values a
    margin ``m * (1 + |a| + |b|)`` above the next. An exact tie counts too (each system breaks it by its own
    rule), except at an integral value: what the flat regions of the ops give (relu's 0, clip's bounds,
    floor), whose derivative is 0 wherever the gradient goes, and which no step can move apart."""
    groups, valid = _groups(op, kink.ranked, x.double())
    if groups.shape[-1] < 2:
        return torch.zeros((), dtype=torch.float64)
    v = groups if kink.largest_of(op) else -groups
    if valid is not None:  # a window's padding: no value there
        v = v.masked_fill(~valid, -float("inf"))
    s = torch.sort(v, dim=-1, descending=True).values[..., :kink.top_of(op) + 1]
    a, b = s[..., :-1], s[..., 1:]
    real = torch.isfinite(b)
    d = torch.where(real, a - b, torch.zeros_like(a))
    room = m * (1 + a.detach().abs() + torch.where(real, b.detach().abs(), torch.zeros_like(b)))
    flat = (d == 0) & (a.detach() == torch.round(a.detach()))
    close = (real & (d < room) & ~flat).detach()
    return (torch.relu(room - d) * close).sum()


def _groups(op, ranked: str, x: torch.Tensor):
    """(values [B, K], valid [B, K] or None): the groups a ranked kink orders, one per row."""
    if ranked == "axis":
        return x.movedim(op.axis, -1).reshape(-1, x.shape[op.axis]), None
    flat = x.reshape(x.shape[0] * x.shape[1], -1)  # [N * C, spatial elements]
    if ranked == "spatial":
        return flat, None
    idx = torch.tensor(window_indices(tuple(x.shape[2:]), *_window(op, x)))  # [windows, K], -1: padding
    valid = (idx >= 0).expand(flat.shape[0], *idx.shape).reshape(-1, idx.shape[1])
    return flat[:, idx.clamp(min=0)].reshape(-1, idx.shape[1]), valid


def _window(op, x):
    """(kernel, stride, padding, dilation) of a MaxPool, or of AdaptiveMaxPool2d's blocks (sizes divisible)."""
    if hasattr(op, "kernel"):
        return tuple(op.kernel), tuple(op.stride), tuple(op.padding), tuple(op.dilation)
    kernel = tuple(int(s) // int(o) for s, o in zip(x.shape[2:], (op.out_h, op.out_w)))
    return kernel, kernel, (0,) * len(kernel), (1,) * len(kernel)


@functools.lru_cache(maxsize=256)
def window_indices(size, kernel, stride, padding, dilation) -> np.ndarray:
    """[windows, kernel elements]: the flat index (over the spatial dims ``size``) of each element of each
    pooling window, -1 where it lies in the padding (made once per pool and shape: read-only)."""
    per_dim = []
    for n, k, s, p, d in zip(size, kernel, stride, padding, dilation):
        k, s, p, d = int(k), int(s), int(p), int(d)
        out = (n + 2 * p - d * (k - 1) - 1) // s + 1
        pos = np.arange(out)[:, None] * s - p + np.arange(k)[None, :] * d  # [out, k]
        per_dim.append(np.where((pos >= 0) & (pos < n), pos, -1))
    idx = np.zeros((1, 1), np.int64)
    inside = np.ones((1, 1), bool)
    for n, pos in zip(size, per_dim):  # row-major: windows and elements both in C order
        idx = (idx[:, None, :, None] * n + np.maximum(pos, 0)[None, :, None, :]).reshape(idx.shape[0] * pos.shape[0], -1)
        inside = (inside[:, None, :, None] & (pos >= 0)[None, :, None, :]).reshape(idx.shape)
    out = np.where(inside, idx, -1)
    out.flags.writeable = False
    return out


def with_kinks(loss: Optional[Callable], cls) -> Optional[Callable]:
    """``loss`` (an op's domain loss, or None) plus the loss of ``cls``'s kinks (``loss`` itself without any)."""
    kinks = dict(cls.kinks)
    if not kinks:
        return loss

    def total(op, xs, dts):
        out = loss(op, xs, dts) if loss is not None else torch.zeros(())
        for index, kink in kinks.items():
            if index < len(xs) and dts[index].is_float:
                out = out + kink_term(op, kink, xs[index], xs, dts[index])
        return out

    return total


def cancelled_kink(gir, weights, inputs) -> Optional[str]:
    """Why the gradient at these values is not determined by the graph, or None: an op's input lies exactly
    on one of its kink points where an Add or Sub made it by cancellation (``max(v) - v`` at the maximum: no
    operand alone is the result), or exactly on a ratio kink (``floormod(v, v)``: no value search moves the
    quotient off 1, and a system that computes it 1 ulp low floors it to 0; kink.py). The search leaves exact
    hits alone because every system computes them alike, and a cancellation breaks that: a compiler that
    computes an operand again inside the Sub's kernel with an FMA gets a residual of a fraction of an ulp
    (XLA: 4e-6 where eager has 0), and |.|'s derivative there is 0 in one and 1 in the other."""
    from nnfuzz.materialize.torch.module import GraphModule
    from nnfuzz.materialize.values import to_torch
    from nnfuzz.ops.binary.spec import Add, Sub

    module = GraphModule(gir, weights).eval()
    env = {i: to_torch(np.asarray(inputs[i]), gir.vars[i].dtype) for i in gir.inputs}
    env.update((w, getattr(module, w)) for w in gir.weights)
    made_by = {}
    with torch.no_grad():
        for fn, inst in zip(module._fns, gir.insts):
            for index, kink in type(inst.op).kinks.items():
                why = _on_ratio_kink(inst, index, kink, env)
                if why is not None:
                    return why
                producer = made_by.get(inst.inputs[index]) if index < len(inst.inputs) else None
                if producer is None or not isinstance(producer.op, (Add, Sub)):
                    continue
                x = env[inst.inputs[index]]
                a, b = torch.broadcast_tensors(*(env[v] for v in producer.inputs))
                for p in kink.points_of(inst.op):
                    if bool(((x == p) & (a != x) & (b != x)).any()):
                        return (f"{type(inst.op).__name__}'s input {inst.inputs[index]} is exactly on its kink at {p:g} "
                                f"by cancellation in {type(producer.op).__name__}: the gradient there depends on rounding")
            out = fn(inst.op, *(env[v] for v in inst.inputs))
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            env.update(zip(inst.outputs, outs))
            made_by.update((v, inst) for v in inst.outputs)
    return None


def _quotient(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x / y, broadcast, with 1 for a zero divisor (its op's domain keeps y off 0; the search may pass it)."""
    x, y = torch.broadcast_tensors(x, y)
    return x / torch.where(y.detach() == 0, torch.ones_like(y), y)


def _on_ratio_kink(inst, index, kink, env) -> Optional[str]:
    """Why input ``index`` of ``inst`` lies exactly on its ratio kink (kink.py), or None."""
    if not 0 <= kink.ratio_with < len(inst.inputs) or index >= len(inst.inputs):
        return None
    x, y = (env[inst.inputs[i]] for i in (index, kink.ratio_with))
    if not (x.is_floating_point() and y.is_floating_point()):
        return None
    q = _quotient(x.double(), y.double())
    hit = (y != 0) & torch.isfinite(q) & (q == torch.round(q))
    if not bool(hit.any()):
        return None
    return (f"{type(inst.op).__name__}: {inst.inputs[index]} / {inst.inputs[kink.ratio_with]} is exactly an integer "
            f"(a jump of its value): the gradient there depends on how a system rounds the quotient")
