"""Where an op's result jumps (ties): comparisons of near-equal values, floor/ceil/round near their
jump points, sign near zero. Jittered twin runs alternate the side of every near tie (``side`` is
+1 or -1), so across runs the oracle sees both results there and treats them as precision noise.

A tie rule is ``fn(inputs, out, margin, side) -> out``, registered per op class with
``@tie_rule(OpClass, ...)`` (or ``tie_rule(OpClass)(fn)``) in the family's
``nnfuzz/ops/<family>/search.py``; ``compare`` and ``shifted`` build the common ones. A rule that needs
the op's attributes (a quantization scale) is registered with ``with_op=True`` and called as
``fn(op, inputs, outs, margin, side, rng) -> outs``, whatever its inputs' dtypes (a requantizing integer kernel
rounds too).
"""
from __future__ import annotations

import torch

from nnfuzz.abstract.optable import OpTable
from nnfuzz.ops import load_aspect

TIES = OpTable("tie rule")


def tie_rule(*op_classes, with_op: bool = False):
    """Register a tie rule for ``op_classes`` (``with_op``: it takes the op and all outputs, see above)."""
    def register(fn):
        fn.with_op = with_op
        return TIES.register(*op_classes)(fn)
    return register


def compare(xs, out, eps, side):
    """A comparison: near-equal operands give ``side > 0``."""
    a, b = torch.broadcast_tensors(xs[0], xs[1])
    if not a.is_floating_point():
        return out
    scale = max(float(a.abs().nan_to_num(0.0, 0.0, 0.0).max()), float(b.abs().nan_to_num(0.0, 0.0, 0.0).max()))
    near = (a - b).abs() <= eps * (a.abs() + b.abs() + scale / 4 + 1e-30)  # the jitter's absolute part too
    return torch.where(near, torch.full_like(out, side > 0), out)


def shifted(fn):
    """A step function ``fn`` evaluated just left or right of its input (by a margin relative to |x|)."""
    def apply(xs, out, eps, side):
        x = xs[0]
        return fn(x + side * eps * (x.abs() + 1.0)).to(out.dtype)
    return apply


def at_jumps(op, xs, outs, eps, side, rng=None):
    """An op that jumps at its kink points (Shrink from 0 to lambd - bias at lambd): its elements within
    ``eps`` of one are evaluated that far to ``side`` of it (register ``with_op=True``)."""
    from nnfuzz.materialize.torch.lowering import run_op

    x = xs[0]
    kink = op.kinks.get(0)
    if kink is None or not x.is_floating_point():
        return outs
    reach = eps * (x.abs() + 1.0)
    near = torch.zeros_like(x, dtype=torch.bool)
    for p in kink.points_of(op):
        near |= (x - p).abs() <= reach
    if not near.any():
        return outs
    moved = run_op(op, x + side * reach, *xs[1:])
    return [torch.where(near, m.to(o.dtype), o) for m, o in zip(moved, outs)] + list(outs[len(moved):])


def flip_ties(op, xs, outs, eps: float, side: int, rng=None):
    """``op``'s outputs with its near ties resolved to ``side`` (unchanged: an op without a tie rule). A
    rule ``with_op`` also gets ``rng`` (the twin run's generator, or None) and may resolve each element's tie
    to a side of its own: a system rounds each near tie its own way, and a sum over several of them moves
    furthest when they go different ways."""
    load_aspect("search")
    fn = TIES.lookup(type(op))
    if fn is not None and xs and getattr(fn, "with_op", False):
        return list(fn(op, xs, outs, eps, side, rng))
    if fn is None or not xs or not xs[0].is_floating_point():
        return outs
    return [fn(xs, outs[0], eps, side)] + list(outs[1:])
