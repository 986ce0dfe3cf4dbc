"""Shrinking shapes and attributes of a (node-reduced) bug graph by re-solving its constraints.

Every placeholder dimension and every size/padding attribute becomes a Z3 variable bounded by its
current value (``index`` and ``any`` attributes, and keyword choices, stay as they are); every op's
``requires`` and ``type_transfer`` are posed again over them, and Z3's optimizer minimises the total.
If the smallest graph loses the bug's signature, the bounds are relaxed to half way and tried again.
Values: each placeholder keeps the leading corner of its old values (the same numbers where they fit).
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional

import numpy as np

from nnfuzz.gir import GraphIR, Inst
from nnfuzz.triage.node_deletion import Candidate


def shrink(c: Candidate, holds: Callable[[Candidate], bool], rounds: int = 3) -> Optional[Candidate]:
    """The smallest shrunk candidate that still ``holds`` (None if no smaller one does)."""
    bounds = 1.0  # 1: minimise freely; then only allow shrinking to half way, a quarter, ...
    for _ in range(rounds):
        cand = _solve(c, bounds)
        if cand is not None and total_elements(cand) < total_elements(c) and holds(cand):
            return cand
        bounds /= 2
    return None


def total_elements(c: Candidate) -> int:
    """Elements over every value of the graph (the size reduction works on)."""
    return sum(int(np.prod([int(d) for d in t.shape])) for t in c.gir.vars.values())


def _solve(c: Candidate, step: float) -> Optional[Candidate]:
    import z3

    from nnfuzz.abstract.tensor import AbsTensor
    from nnfuzz.errors import ConstraintError, InternalError, NNFuzzError

    ctx = z3.Context()
    g = c.gir
    cons, cost, variables = [], [], []
    env: Dict[str, AbsTensor] = {}

    def var(name, now, lo):
        """A variable in [lo + (now - lo) * (1 - step), now] (just ``now`` when nothing to shrink)."""
        if now <= lo:
            return now
        v = z3.Int(name, ctx)
        floor = int(lo + (now - lo) * (1 - step))
        cons.extend([v >= floor, v <= now])
        cost.append(v)
        variables.append(v)
        return v

    for p in list(g.inputs) + list(g.weights):
        t = g.vars[p]
        env[p] = AbsTensor([var(f"{p}_{k}", int(d), 1) for k, d in enumerate(t.shape)], t.dtype)
    ops: List = []
    try:
        for n, inst in enumerate(g.insts):
            op = inst.op
            names = type(op).sym_param_names(max(0, len(op._args) - len(type(op)._sym_params)))
            args = []
            for j, (pname, a) in enumerate(zip(names, op._args)):
                kind = type(op).attr_kind(pname)
                if kind == "size" and isinstance(a, int):
                    args.append(var(f"a{n}_{j}", a, 1))
                elif kind == "pad" and isinstance(a, int) and a > 0:
                    args.append(var(f"a{n}_{j}", a, 0))
                else:
                    args.append(a)
            sym = type(op)(*args, **op._kwargs)
            ins = [env[v] for v in inst.inputs]
            cons.extend(x for x in sym.checked_requires(ins) if x is not True)
            outs = sym.checked_type_transfer(ins)
            for v, o in zip(inst.outputs, outs):
                cons.extend(d >= 1 for d in o.shape if not isinstance(d, int))
                env[v] = o
            ops.append(sym)
    except InternalError:  # a bug in nnfuzz: shown, not taken for "cannot shrink"
        raise
    except (NNFuzzError, ConstraintError):  # the symbolic graph cannot be posed (an op rejects symbolic sizes)
        return None
    if not variables or any(x is False for x in cons):
        return None
    opt = z3.Optimize(ctx=ctx)
    opt.set("timeout", 2000)
    opt.add(*[x for x in cons if not isinstance(x, bool)])
    opt.minimize(z3.Sum(*cost))
    if opt.check() != z3.sat:
        return None
    m = opt.model()

    def value(x):
        return x if isinstance(x, int) else m.eval(x, model_completion=True).as_long()

    try:
        insts = [Inst(type(op)(*[value(a) for a in op._args], **op._kwargs), list(i.inputs), list(i.outputs))
                 for op, i in zip(ops, g.insts)]
        new_vars = {}
        for p in list(g.inputs) + list(g.weights):
            new_vars[p] = AbsTensor([value(d) for d in env[p].shape], g.vars[p].dtype)
        for inst in insts:
            outs = inst.op.checked_type_transfer([new_vars[v] for v in inst.inputs])
            new_vars.update(zip(inst.outputs, outs))
        gir = GraphIR(vars=new_vars, inputs=list(g.inputs), weights=list(g.weights), insts=insts,
                      outputs=list(g.outputs)).check()
    except InternalError:
        raise
    except (NNFuzzError, ConstraintError):  # the solved sizes do not make a valid graph: no shrink
        return None
    corner = {p: _corner(np.asarray(arr), new_vars[p].shape) for p, arr in {**c.inputs, **c.weights}.items()
              if p in new_vars}
    return Candidate(gir, {w: corner[w] for w in g.weights}, {i: corner[i] for i in g.inputs})


def _corner(a: np.ndarray, shape) -> np.ndarray:
    return np.ascontiguousarray(a[tuple(slice(0, int(d)) for d in shape)]).reshape([int(d) for d in shape])
