"""Interval propagation over nnfuzz.abstract.symint constraints (HC4-style, to a fixpoint).

Every node of the constraint DAG holds an interval; a variable's interval is its domain. Revising one
constraint evaluates its nodes bottom-up (forward), requires its root to be true, then narrows each
node's children top-down (backward projection through + - * // % If and the comparisons). A
variable whose domain shrinks queues the constraints that mention it again (AC-3 style). An empty
interval means the current domains admit no solution. Bounds at or beyond +-BIG stand for infinity.

Predicates are intervals over {0, 1}. The propagation is sound (no solution is ever cut) and
incomplete: ``Network.solved`` is the exact check once every variable is a single value.

Here: compiling the constraints into a Network, the domains, and the queue to a fixpoint; the per-node
forward and backward rules are in intervals.py.
"""
from __future__ import annotations

from collections import deque
from typing import Dict, List, Optional, Sequence, Tuple

from nnfuzz.abstract.symint import Arena, Pred, Term
from nnfuzz.generate.intervals import BIG, CONST, EQ, LE, LT, VAR, Empty, IntervalRules

REVISE_CAP = 6  # revisions per constraint and propagation: slowly converging cycles stop there


class Network(IntervalRules):
    """The compiled constraints of one insertion, their variables' domains and the propagation state."""

    def __init__(self, constraints: Sequence[Pred], variables: Sequence[Term], domains: Sequence[Tuple[int, int]],
                 arena: Optional[Arena] = None):
        """``arena``: where the terms were built (symint.building), else they are registered anew."""
        arena = arena if arena is not None else Arena()
        imported: Dict[int, int] = {}
        self.var_node: List[int] = [v.n if v.ar is arena else self._var(arena, v, imported) for v in variables]
        roots = [arena.node(c, imported) for c in constraints]
        self.op, self.kids = arena.op, arena.kids
        n = len(self.op)
        self.lo: List[int] = [-BIG] * n
        self.hi: List[int] = [BIG] * n
        self.dirty: List[bool] = [False] * n
        for v, i in arena.consts.items():
            self.lo[i] = self.hi[i] = v
        for i, (lo, hi) in zip(self.var_node, domains):
            self.lo[i], self.hi[i] = lo, hi
        self.node_var: Dict[int, int] = {nd: i for i, nd in enumerate(self.var_node)}
        self.cons: List[List[int]] = []  # per constraint: its inner nodes, children before parents
        self.var_cons: List[List[int]] = [[] for _ in variables]
        mark = [0] * n
        self.empty = False
        for stamp, r in enumerate(roots, 1):
            if self._bound(r):  # a bound on one variable narrows its domain once, for good
                continue
            order, vs = self._order(r, mark, stamp)
            for vi in vs:
                self.var_cons[vi].append(len(self.cons))
            self.cons.append(order)
        self.entailed = [False] * len(self.cons)

    def _bound(self, r: int) -> bool:
        """Apply ``v <= c``, ``c < v``, ``v == c`` (and so on) to the domain of ``v``; False for other constraints."""
        op, kids, lo, hi = self.op, self.kids, self.lo, self.hi
        code = op[r]
        if code not in (LE, LT, EQ):
            return False
        a, b = kids[r]
        if not ((op[a] == VAR and op[b] == CONST) or (op[a] == CONST and op[b] == VAR)):
            return False
        s = code == LT
        if op[a] == VAR:  # v <= c - s
            c = kids[b][0]
            lo[a], hi[a] = (max(lo[a], c), min(hi[a], c)) if code == EQ else (lo[a], min(hi[a], c - s))
            self.empty |= lo[a] > hi[a]
        else:  # c + s <= v
            c = kids[a][0]
            lo[b], hi[b] = (max(lo[b], c), min(hi[b], c)) if code == EQ else (max(lo[b], c + s), hi[b])
            self.empty |= lo[b] > hi[b]
        return True

    @staticmethod
    def _var(arena: Arena, v: Term, imported: Dict[int, int]) -> int:
        arena.op.append(VAR)
        arena.kids.append(())
        imported[id(v)] = len(arena.op) - 1
        return imported[id(v)]

    def _order(self, root: int, mark: List[int], stamp: int):
        """Inner nodes under ``root`` in index order (a term's children are built, so numbered, before
        it), and the variables they mention."""
        op, kids, node_var = self.op, self.kids, self.node_var
        mark[root] = stamp
        stack = [root]
        inner: List[int] = []
        vs: List[int] = []
        while stack:
            i = stack.pop()
            code = op[i]
            if code == VAR:
                vs.append(node_var[i])
            elif code != CONST:
                inner.append(i)
                for k in kids[i]:
                    if mark[k] != stamp:
                        mark[k] = stamp
                        stack.append(k)
        inner.sort()
        return inner, vs

    # ---- domains ----------------------------------------------------------------------------
    def domain(self, vi: int) -> Tuple[int, int]:
        n = self.var_node[vi]
        return self.lo[n], self.hi[n]

    def snapshot(self):
        lo, hi = self.lo, self.hi
        return [(lo[n], hi[n]) for n in self.var_node], list(self.entailed)

    def restore(self, snap) -> None:
        doms, ent = snap
        for n, (a, b) in zip(self.var_node, doms):
            self.lo[n], self.hi[n] = a, b
        self.entailed = list(ent)

    def assign(self, vi: int, value: int) -> bool:
        """Fix variable ``vi`` to ``value`` and propagate; False if that leaves no solution."""
        n = self.var_node[vi]
        if not self.lo[n] <= value <= self.hi[n]:
            return False
        self.lo[n] = self.hi[n] = value
        return self.propagate(self.var_cons[vi])

    # ---- propagation ------------------------------------------------------------------------
    def propagate(self, queue: Optional[Sequence[int]] = None) -> bool:
        """Revise constraints (all, or ``queue``) until no domain shrinks; False on an empty domain."""
        if self.empty:
            return False
        pending = deque(range(len(self.cons)) if queue is None else [c for c in queue if not self.entailed[c]])
        queued = set(pending)
        budget = REVISE_CAP * max(1, len(self.cons))
        var_cons, entailed = self.var_cons, self.entailed
        try:
            while pending and budget > 0:
                budget -= 1
                c = pending.popleft()
                queued.discard(c)
                changed = self._revise(c)
                if changed is None:
                    entailed[c] = True
                    continue
                for vi in changed:
                    for c2 in var_cons[vi]:
                        if c2 not in queued and not entailed[c2]:
                            queued.add(c2)
                            pending.append(c2)
        except Empty:
            return False
        return True

    def solved(self) -> bool:
        """Whether every constraint evaluates to true (exact once every domain is a single value)."""
        for c, order in enumerate(self.cons):
            self._forward(order)
            if self.lo[order[-1]] != 1:
                return False
        return True

    def _revise(self, c: int):
        """Narrow by constraint ``c``: None if it is entailed, else the variables whose domain shrank."""
        order = self.cons[c]
        self._forward(order)
        lo, hi = self.lo, self.hi
        root = order[-1]
        if lo[root] == 1:
            return None
        if hi[root] == 0:
            raise Empty
        lo[root] = 1
        self.dirty[root] = True
        changed: List[int] = []
        for i in reversed(order):
            if self.dirty[i]:
                self._backward(i, changed)
        return changed
