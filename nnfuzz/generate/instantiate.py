"""One insertion solved without Z3: pose it over symint terms, propagate, then instantiate (Isra-style).

Variables are the new op's attributes and its new placeholders' dims. They are fixed one at a time
in the Isra order: axes and other "index" attributes first (they say which dims a rule relates, the
paper's unknown functions), then the first input's dims, the other attributes, the other inputs' dims; each
value drawn by attribute binning within the variable's current domain, and the constraints are
propagated after every choice (nnfuzz/generate/propagate.py). Propagation usually leaves only
consistent values, so the walk rarely backtracks; when a value empties some domain a few other values
are tried, then the walk restarts with fresh draws and the variable it got stuck at first in the order,
and the caller asks Z3 when all restarts fail.

Draws are steered by what the constraints say: a variable that must equal a known value (``d == 1``
or ``d == x.shape[2]`` inside an ``Or`` of broadcasting) is often given that value, and a factor of a
product that must equal a known value (reshape, groups) is drawn among that value's divisors.
"""
from __future__ import annotations

import random
from typing import List, Optional, Tuple

from nnfuzz.abstract import symint
from nnfuzz.abstract.symint import Pred, Term
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError, OpDefinitionError
from nnfuzz.generate import binning
from nnfuzz.generate.intervals import CONST, EQ, ITE, MOD, MUL, VAR
from nnfuzz.generate.propagate import Network

ATTR_BOUND = 1 << 30  # attribute domains before propagation: [-ATTR_BOUND, ATTR_BOUND]
VALUE_TRIES = 4  # values tried for one variable before the walk restarts
RESTARTS = 4  # walks before the caller falls back to Z3
DIVISOR_LIMIT = 1 << 14  # divisor and multiple sets are listed for values up to this
SMALL_DOMAIN = 8  # a variable with fewer values left is tried on every one before the walk gives up
EXHAUSTED = "exhausted"  # no value of the variable is left (values outside ``Hints.allowed`` cannot work)
SUGGEST = 0.5  # chance to take a value some equality names instead of a binned draw (first try)


class Unposable(Exception):
    """The op's rules did not run on symint terms (they call z3 themselves): pose it to Z3 instead."""


class Problem:
    """An insertion posed over symint terms: its variables (attributes first, then new dims)."""

    def __init__(self, names: List[str], kinds: List[str], slots, dims_per_slot: List[List[Term]],
                 attrs: List[Term], constraints: List[Pred]):
        self.names, self.kinds, self.slots = names, kinds, slots
        self.attrs, self.dims_per_slot = attrs, dims_per_slot
        self.constraints = constraints
        self.arena = None  # the symint.Arena the terms were built in


def pose(gen, cls, names, kinds, kw, slots, target) -> Optional[Problem]:
    """The insertion's constraints over fresh symint variables, or None if they are plainly false.

    Raises Unposable when the op's own code cannot run on symint terms."""
    with symint.building() as arena:
        problem = _pose(gen, cls, names, kinds, kw, slots, target)
    if problem is not None:
        problem.arena = arena
    return problem


def _pose(gen, cls, names, kinds, kw, slots, target) -> Optional[Problem]:
    attrs = [symint.var(f"a_{n}") for n in names]
    inputs, dims_per_slot, fresh = [], [], []
    for k, s in enumerate(slots):
        if isinstance(s, str):
            inputs.append(gen.vars[s])
            dims_per_slot.append([])
        else:
            shape = [symint.var(f"x{k}_{d}") for d in range(s[0])]
            dims_per_slot.append(shape)
            inputs.append(AbsTensor(shape, s[1]))
            fresh.append(inputs[-1])
    try:
        op = cls(*attrs, **kw)
        outs = op.checked_type_transfer(inputs)
        cons = op.checked_requires(inputs, validated=True)
    except ConstraintError:
        return None
    except OpDefinitionError as e:
        raise Unposable(str(e)) from e
    for o in outs:
        for d in o.shape:
            if not isinstance(d, (int, Term)) or isinstance(d, bool):
                raise Unposable(f"{cls.name}.type_transfer gave the dim {d!r} ({type(d).__name__})")
    # the concrete form of the output rules (each dim >= 1, the element count within budget) poses the
    # budget exactly, which propagation handles as well as bounds per dim
    cons = cons + gen._output_constraints(outs, target, symbolic=False)
    cons += [t.nelement() <= gen.policy.max_elems for t in fresh if not t.is_concrete()]
    kept = []
    for c in cons:
        if c is True:
            continue
        if c is False:
            return None
        if not isinstance(c, Pred):
            raise Unposable(f"{cls.name}: the predicate {c!r} ({type(c).__name__}) is not built from symint terms")
        kept.append(c)
    return Problem(names, kinds, slots, dims_per_slot, attrs, kept)


def solve(problem: Problem, rng: random.Random, index_bound: int, max_elems: int):
    """``(attribute values, shapes per slot)``, or "unsat" when propagation proves there is none,
    or None when sampling found none (the caller may ask Z3)."""
    dims = [d for ds in problem.dims_per_slot for d in ds]
    variables = problem.attrs + dims
    domains = [(-ATTR_BOUND, ATTR_BOUND)] * len(problem.attrs) + [(1, max_elems)] * len(dims)
    net = Network(problem.constraints, variables, domains, problem.arena)
    if not net.propagate():
        return "unsat"
    n_attr = len(problem.attrs)
    first = len(problem.dims_per_slot[0]) if problem.dims_per_slot else 0
    index = [i for i, k in enumerate(problem.kinds) if k == "index"]
    order = index + list(range(n_attr, n_attr + first)) + [i for i in range(n_attr) if i not in index] \
        + list(range(n_attr + first, len(variables)))
    kinds = list(problem.kinds) + ["dim"] * len(dims)
    hints = Hints(net)
    base = net.snapshot()
    for _ in range(RESTARTS):
        net.restore(base)
        got = _walk(net, order, kinds, hints, rng, index_bound)
        if got == "unsat":
            return got
        if got is not True:  # stuck at variable ``got``: fix it first on the next walk
            order = [got] + [v for v in order if v != got]
        elif net.solved():
            vals = [net.domain(i)[0] for i in range(len(variables))]
            shapes, pos = [], n_attr
            for slot, ds in zip(problem.slots, problem.dims_per_slot):
                shapes.append(None if isinstance(slot, str) else vals[pos: pos + len(ds)])
                pos += len(ds)
            return vals[:n_attr], shapes
    return None


def _walk(net: Network, order: List[int], kinds: List[str], hints: "Hints", rng, index_bound: int):
    """Fix the variables in ``order``: True when all are fixed, the variable where it got stuck, or
    "unsat" when the first variable chosen has no value left (no decision was made: there is no solution)."""
    decided = False
    for vi in order:
        lo, hi = net.domain(vi)
        if lo == hi:
            continue
        small = hi - lo < SMALL_DOMAIN  # small domains are tried out value by value
        tried: List[int] = []
        while True:
            if small and tried:  # after the first (binned) choice: the values left, in random order
                rest = [v for v in range(lo, hi + 1) if v not in tried]
                val = rng.choice(rest) if rest else EXHAUSTED
            else:
                val = _choose(net, vi, kinds[vi], hints, rng, index_bound, tried)
            if val is EXHAUSTED:
                return vi if decided else "unsat"
            if val is None or (not small and len(tried) >= VALUE_TRIES):
                return vi
            snap = net.snapshot()
            if net.assign(vi, val):
                break
            net.restore(snap)
            tried.append(val)
        decided = True
    return True


def _choose(net: Network, vi: int, kind: str, hints: "Hints", rng, index_bound: int, tried: List[int]):
    """A value for variable ``vi``: one an equality suggests, else a binned draw, within its domain."""
    lo, hi = net.domain(vi)
    allowed = hints.allowed(vi, lo, hi)
    if allowed is not None:
        allowed = [v for v in allowed if v not in tried]
        if not allowed:
            return EXHAUSTED
    sugg = [v for v in hints.suggested(vi, lo, hi) if v not in tried and (allowed is None or v in allowed)]
    if sugg and rng.random() < (SUGGEST if not tried else 0.8):
        return rng.choice(sugg)
    b = binning.pick_bin(kind, rng, index_bound) if kind != "dim" else rng.choice(binning.SIZE_BINS[:5])
    if b is None:
        b = (-2, 8)  # an "any" attribute: what the concrete guesses draw
    if allowed is not None:
        inbin = [v for v in allowed if b[0] <= v <= b[1]]
        return rng.choice(inbin or allowed)
    for _ in range(3):
        val = _draw(lo, hi, b, rng)
        if val not in tried:
            return val
    return None


def _draw(lo: int, hi: int, b: Tuple[int, int], rng) -> int:
    """Uniform in bin ``b`` cut to [lo, hi]; if they miss, uniform in the modest part of [lo, hi]."""
    bl, bh = max(lo, b[0]), min(hi, b[1])
    if bl <= bh:
        return rng.randint(bl, bh)
    m = binning.MODEST
    if hi < -m:
        return rng.randint(max(lo, hi - m), hi)
    if lo > m:
        return rng.randint(lo, min(hi, lo + m))
    return rng.randint(max(lo, -m), min(hi, m))


class Hints:
    """What the constraints say about single variables: values equalities name, divisor sets."""

    def __init__(self, net: Network):
        self.net = net
        n = len(net.var_node)
        self.eq: List[List[Tuple[int, int]]] = [[] for _ in range(n)]  # (node y, c) with "c * v == y" somewhere
        self.mul: List[List[Tuple[int, List[int]]]] = [[] for _ in range(n)]  # (product node, other factors)
        self.mod: List[List[Tuple[int, int, bool]]] = [[] for _ in range(n)]  # (mod node, other side, is divisor)
        self.multiple: List[List[int]] = [[] for _ in range(n)]  # nodes d with "v % d == 0" somewhere (an Or)
        op, kids = net.op, net.kids
        used = sorted(set().union(*net.cons))
        under_mul = set()
        for i in used:
            if op[i] == MUL:
                under_mul.update(kids[i])
        for i in used:
            code = op[i]
            if code == EQ:
                a, b = kids[i]
                for x, y in ((a, b), (b, a)):
                    for v in self._branches(x):  # x, or what an If chain (a select) may pick as x
                        self.eq[net.node_var[v]].append((y, 1))
                    if op[x] == MUL:  # c * v == y: v == y / c
                        p, q = kids[x]
                        for v, c in ((p, q), (q, p)):
                            if op[v] == VAR and op[c] == CONST and kids[c][0]:
                                self.eq[net.node_var[v]].append((y, kids[c][0]))
                    if op[x] == MOD and op[y] == CONST and kids[y][0] == 0 and op[kids[x][0]] == VAR:
                        self.multiple[net.node_var[kids[x][0]]].append(kids[x][1])  # v % d == 0
            elif code == MUL and i not in under_mul:
                factors = self._factors(i)
                for j, f in enumerate(factors):
                    if op[f] == VAR:
                        self.mul[net.node_var[f]].append((i, factors[:j] + factors[j + 1:]))
            elif code == MOD:
                a, b = kids[i]
                if op[b] == VAR:
                    self.mod[net.node_var[b]].append((i, a, True))
                if op[a] == VAR:
                    self.mod[net.node_var[a]].append((i, b, False))

    def _branches(self, i: int) -> List[int]:
        op = self.net.op[i]
        if op == VAR:
            return [i]
        if op == ITE:
            _, a, b = self.net.kids[i]
            return self._branches(a) + self._branches(b)
        return []

    def _factors(self, i: int) -> List[int]:
        if self.net.op[i] != MUL:
            return [i]
        a, b = self.net.kids[i]
        return self._factors(a) + self._factors(b)

    def suggested(self, vi: int, lo: int, hi: int) -> List[int]:
        net, out = self.net, []
        for y, c in self.eq[vi]:
            v = net.lo[y]
            if v == net.hi[y] and v % c == 0:
                v //= c
                if lo <= v <= hi and v not in out:
                    out.append(v)
        for d in self.multiple[vi]:
            m = abs(net.lo[d])
            if m and net.lo[d] == net.hi[d]:
                out += [v for v in range(m * max(1, -(-lo // m)), hi + 1, m)[:3] if v not in out]
        return out

    def allowed(self, vi: int, lo: int, hi: int) -> Optional[List[int]]:
        """The values in [lo, hi] that products and remainders leave (None: no such restriction)."""
        net = self.net
        out: Optional[List[int]] = None
        for node, others in self.mul[vi]:
            p = net.lo[node]
            if p != net.hi[node] or p == 0:
                continue
            k = 1
            for f in others:
                if net.lo[f] == net.hi[f]:
                    k *= net.lo[f]
            if k == 0 or p % k:
                return []
            if abs(p // k) <= DIVISOR_LIMIT:
                out = _meet(out, _divisors(abs(p // k), lo, hi))
        for node, other, is_divisor in self.mod[vi]:
            if net.lo[node] != 0 or net.hi[node] != 0 or net.lo[other] != net.hi[other] or net.lo[other] == 0:
                continue
            x = abs(net.lo[other])
            if is_divisor and x <= DIVISOR_LIMIT:
                out = _meet(out, _divisors(x, lo, hi))
            elif not is_divisor and x > 1 and hi - lo <= DIVISOR_LIMIT * x:
                out = _meet(out, [m * x for m in range(-(-lo // x), hi // x + 1)])
        return out


def _meet(a: Optional[List[int]], b: List[int]) -> List[int]:
    if a is None:
        return b
    keep = set(b)
    return [v for v in a if v in keep]


def _divisors(n: int, lo: int, hi: int) -> List[int]:
    small = [d for d in range(1, int(n ** 0.5) + 1) if n % d == 0]
    pos = sorted(set(small + [n // d for d in small]))
    return [v for v in sorted([-d for d in pos] + pos) if lo <= v <= hi]
