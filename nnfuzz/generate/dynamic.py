"""Dynamic shapes: a static graph lifted to a family of shapes (docs/dynamic-shapes.md).

Chosen input dims become named symbols (a dim may share its symbol with an equal dim of another input,
so broadcasting and equal-dim rules are posed over one symbol); every op's ``type_transfer`` and
``requires`` are re-run on the symbolic inputs (the op's attributes stay as generated), giving one Z3
problem over the symbols. A symbol the rules pin to its generated value (a Reshape's constant target, a
weight it must broadcast with, a dim an op's ``static_dims`` names: a per-axis scale's length) goes back
to static. The others get at least ``MIN_SHAPES`` distinct
assignments, the generated one first, then the edge values (every symbol 1, every symbol the largest
size bin) and random bins, each as near as the rules allow, and each re-checked concretely
(``GraphIR.at`` plus the element budget).
"""
from __future__ import annotations

import random
from typing import Dict, List, Optional, Set

import z3
from z3 import z3util

from nnfuzz.abstract import arith
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError, InternalError, OpDefinitionError
from nnfuzz.generate import binning
from nnfuzz.gir import GraphIR, ShapeFamily

MIN_SHAPES = 3       # a family has at least this many assignments (else the graph stays static)
MAX_SHAPES = 4       # and at most this many
SHARE_PROB = 0.7     # a chosen dim equal to an earlier chosen dim takes its symbol with this probability
PICK_PROB = 0.6      # each input dim is chosen to be symbolic with this probability (at least one is)
TIMEOUT_MS = 200     # per Z3 check
LARGEST = binning.SIZE_BINS[-1][1]


def lift(gir: GraphIR, max_elems: int, rng: random.Random) -> Optional[GraphIR]:
    """``gir`` with a ShapeFamily of at least MIN_SHAPES assignments, or None when its rules leave no
    input dim free (or Z3 cannot tell within its time). ``gir`` must be static; it is not changed."""
    if gir.family is not None:
        raise InternalError("lift: the graph already has a shape family")
    dims = _choose(gir, rng)
    if not dims:
        return None
    ctx = z3.Context()
    syms = {s: z3.Int(s, ctx) for s in sorted({s for axes in dims.values() for s in axes if s})}
    orig = {s: _original(gir, dims, s) for s in syms}
    cons = _rules(gir, dims, syms, max_elems)
    if cons is None:
        return None
    solver = z3.Solver(ctx=ctx)
    solver.set("timeout", TIMEOUT_MS)
    solver.add(*cons)
    free = [s for s in syms if solver.check(syms[s] != orig[s]) == z3.sat]
    if not free:
        return None
    for s in syms:
        if s not in free:
            solver.add(syms[s] == orig[s])
    dims = {i: [s if s in free else None for s in axes] for i, axes in dims.items()}
    dims = {i: axes for i, axes in dims.items() if any(axes)}
    found = [{s: orig[s] for s in free}]
    targets = [dict.fromkeys(free, 1), dict.fromkeys(free, LARGEST)]
    targets += [{s: binning.sample(rng.choice(binning.SIZE_BINS), rng) for s in free} for _ in range(4)]
    for want in targets:
        if len(found) >= MAX_SHAPES:
            break
        got = _nearest(solver, syms, free, want, found)
        if got is not None and _valid(gir, dims, found + [got], max_elems):
            found.append(got)
    if len(found) < MIN_SHAPES:
        return None
    return GraphIR(dict(gir.vars), list(gir.inputs), list(gir.weights), list(gir.insts), list(gir.outputs),
                   family=ShapeFamily(dims, found))


def _choose(gir: GraphIR, rng: random.Random) -> Dict[str, List[Optional[str]]]:
    """Per input, per axis, a symbol name or None; equal dims share a symbol by SHARE_PROB."""
    dims, by_value, n = {}, {}, 0
    slots = [(i, a) for i in gir.inputs for a in range(gir.vars[i].ndims)]
    if not slots:
        return {}
    chosen = {x for x in slots if rng.random() < PICK_PROB} or {rng.choice(slots)}
    for i in gir.inputs:
        axes = []
        for a, d in enumerate(gir.vars[i].shape):
            if (i, a) not in chosen:
                axes.append(None)
                continue
            same = by_value.get(int(d), [])
            if same and rng.random() < SHARE_PROB:
                axes.append(rng.choice(same))
            else:
                name = f"s{n}"
                n += 1
                by_value.setdefault(int(d), []).append(name)
                axes.append(name)
        dims[i] = axes
    return dims


def _original(gir: GraphIR, dims, s: str) -> int:
    return next(int(gir.vars[i].shape[a]) for i, axes in dims.items() for a, x in enumerate(axes) if x == s)


def _rules(gir: GraphIR, dims, syms, max_elems: int) -> Optional[list]:
    """Every op's requires and type_transfer over the symbolic inputs, with positive dims and the
    element budget on every tensor; None when some op's rules cannot be posed symbolically."""
    vars = dict(gir.vars)
    cons = []
    for i, axes in dims.items():
        t = gir.vars[i]
        vars[i] = AbsTensor([syms[s] if s else int(d) for d, s in zip(t.shape, axes)], t.dtype)
        cons += [syms[s] >= 1 for s in axes if s] + [syms[s] <= LARGEST for s in axes if s]
    try:
        for inst in gir.insts:
            ins = [vars[v] for v in inst.inputs]
            cons += [c for c in inst.op.checked_requires(ins)]
            pinned = getattr(inst.op, "static_dims", None)  # (input, axis) pairs a lowering sizes constants by
            if pinned is not None:
                cons += [ins[k].shape[a] == gir.vars[inst.inputs[k]].shape[a] for k, a in pinned(ins)]
            outs = inst.op.checked_type_transfer(ins)
            vars.update(zip(inst.outputs, outs))
    except (ConstraintError, TypeError, z3.Z3Exception):  # rules that branch on concrete dims
        return None
    for t in vars.values():
        if not t.is_concrete():
            cons += [d >= 1 for d in t.shape if arith.is_sym(d)]
            cons.append(arith.prod(t.shape) <= max_elems)
    if any(c is False for c in cons):
        raise InternalError("lift: the generated shapes break an op's rules")  # they passed them
    return [c for c in cons if c is not True]


def _nearest(solver, syms, free, want: Dict[str, int], found: List[Dict[str, int]]) -> Optional[Dict[str, int]]:
    """An assignment not in ``found``, with as many symbols at ``want`` as fit (greedily, in order)."""
    solver.push()
    try:
        for a in found:
            solver.add(z3.Or([syms[s] != a[s] for s in free]))
        kept = []
        for s in free:
            pref = syms[s] == want[s]
            if solver.check(*kept, pref) == z3.sat:
                kept.append(pref)
        if solver.check(*kept) != z3.sat:
            return None
        m = solver.model()
        return {s: m.eval(syms[s], model_completion=True).as_long() for s in free}
    finally:
        solver.pop()


def _valid(gir: GraphIR, dims, assignments, max_elems: int) -> bool:
    """The newest assignment, checked concretely: every op's rules and the element budget."""
    fam = GraphIR(gir.vars, gir.inputs, gir.weights, gir.insts, gir.outputs, family=ShapeFamily(dims, assignments))
    try:
        g = fam.at(len(assignments) - 1)
    except (InternalError, ConstraintError) as e:
        raise OpDefinitionError(f"dynamic shapes: Z3 found {assignments[-1]} for the symbolic dims {dims} "
                                f"satisfying every op's symbolic rules, but on those concrete values: {e}; "
                                "type_transfer/requires must agree on symbolic and concrete dims "
                                "(docs/operator-api.md)") from e
    return all(int(arith.prod(t.shape)) <= max_elems and all(d >= 1 for d in t.shape) for t in g.vars.values())


def broadcast_ones(gir: GraphIR) -> Set[str]:
    """The family's symbols that broadcasting stretches from size 1 at some shape: an op's input axis
    whose size depends on symbols is 1 there, while another input has the output's size (> 1) on that
    axis (aligned from the right); the symbols of that size that are 1 there are named (all of its
    symbols if none is). torch's ``mark_unbacked`` reports a size as never 1, so one graph cannot serve
    such a symbol (backends/inductor.py marks it backed). Conservative: a non-broadcasting op whose
    inputs happen to align so (a MatMul's contracted 1 beside its column count) names its symbols too;
    a graph whose rules cannot be posed symbolically names every symbol."""
    fam = gir.family
    if fam is None:
        return set()
    ctx = z3.Context()
    syms = {s: z3.Int(s, ctx) for s in fam.symbols()}
    symbolic = dict(gir.vars)  # each var with the family's symbols in its shape
    for i, axes in fam.dims.items():
        t = gir.vars[i]
        symbolic[i] = AbsTensor([syms[s] if s else int(d) for d, s in zip(t.shape, axes)], t.dtype)
    graphs = [gir.at(k) for k in range(gir.n_shapes)]
    found: Set[str] = set()
    try:
        for inst in gir.insts:
            ins = [symbolic[v].shape for v in inst.inputs]
            for k, g in enumerate(graphs):
                found |= _stretched(inst, ins, g, fam.assignments[k], syms)
            symbolic.update(zip(inst.outputs, inst.op.checked_type_transfer([symbolic[v] for v in inst.inputs])))
    except (ConstraintError, TypeError, z3.Z3Exception):  # rules that branch on concrete dims
        return set(fam.symbols())
    return found


def _stretched(inst, sym_ins, g: GraphIR, sizes: Dict[str, int], syms) -> Set[str]:
    """broadcast_ones at one shape (``g``, the symbols' ``sizes``) for one instruction."""
    ins = [g.vars[v].shape for v in inst.inputs]
    found = set()
    for out in (g.vars[v].shape for v in inst.outputs):
        for a in range(1, len(out) + 1):
            if int(out[-a]) <= 1 or int(out[-a]) not in [int(s[-a]) for s in ins if len(s) >= a]:
                continue
            for s, e in zip(ins, sym_ins):
                if len(s) < a or int(s[-a]) != 1 or not arith.is_sym(e[-a]):
                    continue
                names = [str(x) for x in z3util.get_vars(e[-a]) if str(x) in syms]
                found.update([x for x in names if sizes[x] == 1] or names)
    return found


def shapeless_broadcasts(gir: GraphIR) -> List[str]:
    """The family's broadcasts that a system shaping them at compile time cannot shape: an op whose rule
    shapes dims of its operands together (``_columns``: a broadcast, or dims that must be equal) where one
    column puts a symbolic dim against a constant > 1 (1 or that constant at run time) or against another
    symbolic dim (equal, or one of them 1). Relax gives such a result no shape, only its rank, and TVM then
    fails on whatever reads it (docs/dynamic-findings-tvm.md, "B"); ``Backend.symbolic_broadcast`` False
    keeps such a graph static. Each as ``"Op: a vs b"``; a graph whose rules cannot be posed symbolically:
    every op."""
    fam = gir.family
    if fam is None:
        return []
    ctx = z3.Context()
    syms = {s: z3.Int(s, ctx) for s in fam.symbols()}
    symbolic = dict(gir.vars)
    for i, axes in fam.dims.items():
        t = gir.vars[i]
        symbolic[i] = AbsTensor([syms[s] if s else int(d) for d, s in zip(t.shape, axes)], t.dtype)
    found = []
    try:
        for inst in gir.insts:
            outs = inst.op.checked_type_transfer([symbolic[v] for v in inst.inputs])
            shapes = [list(symbolic[v].shape) for v in inst.inputs]
            for col in _columns(inst.op, shapes, list(outs[0].shape) if outs else []):
                for x in col:
                    for y in col:
                        if arith.is_sym(x) and (not arith.is_sym(y) and int(y) != 1 or arith.is_sym(y)
                                                and not z3.eq(z3.simplify(x), z3.simplify(y))):
                            found.append(f"{inst.op.name}: {x} vs {y}")
            symbolic.update(zip(inst.outputs, outs))
    except (ConstraintError, TypeError, z3.Z3Exception):  # rules that branch on concrete dims
        return [inst.op.name for inst in gir.insts]
    return list(dict.fromkeys(found))


def _columns(op, shapes: list, out: list) -> list:
    """The dims of ``op``'s operands (``shapes``; ``out``: its first output's shape) that its rule shapes
    together: right-aligned broadcast columns (binary ops, Where, PRelu's slope; MatMul's batch dims; Gemm's
    C and Linear's bias against the product), or dims that must be equal (a channel norm's channel and its
    per-channel inputs; Concat's other axes). A tvm-cpu soak found B folders from the last five."""
    from nnfuzz.ops.activation.spec import PRelu
    from nnfuzz.ops.binary.spec import BinaryOp
    from nnfuzz.ops.combine.spec import Concat
    from nnfuzz.ops.linear.spec import Gemm, Linear, MatMul
    from nnfuzz.ops.norm.spec import ChannelNormBase
    from nnfuzz.ops.quant.spec import MatMulInteger, QLinearMatMul
    from nnfuzz.ops.select.spec import Where

    def aligned(group):
        return [[s[-a] for s in group if len(s) >= a] for a in range(1, max(map(len, group), default=0) + 1)]

    if isinstance(op, (MatMul, MatMulInteger, QLinearMatMul)):
        return aligned([s[:-2] for s in shapes])
    if isinstance(op, (BinaryOp, Where, PRelu)):
        return aligned(shapes)
    if isinstance(op, (Gemm, Linear)):
        return aligned([out, shapes[2]])
    if isinstance(op, ChannelNormBase):
        return [[shapes[0][1]] + [s[0] for s in shapes[1:]]]
    if isinstance(op, Concat):
        return [[s[i] for s in shapes] for i in range(len(shapes[0])) if i != op.axis]
    return []
