"""Graph construction by forward and backward insertion, one local problem per insertion.

Forward: a new op consumes an existing tensor (plus other existing tensors or new placeholders).
Backward: a new op produces an existing placeholder, its inputs being new placeholders or existing
tensors that do not depend on that placeholder. Every insertion first tries a few binned guesses
checked in plain Python; if none fits, its rules are solved by propagation and sampling
(instantiate.py), and posed to Z3 with binning preferences only when that finds nothing. Either way
the result is re-checked concretely before it enters the graph.

This file holds the insertion strategies and the Z3 problem; the generator's other parts are mixins
named for what they hold: pools.py (which op to draw), concrete.py (guesses and the concrete re-check),
graph_state.py (the graph under construction and the finished GraphIR).
"""
from __future__ import annotations

import random
import time
from typing import Dict, List, Optional, Tuple, Union

import z3

from nnfuzz.abstract import arith
from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError, OpDefinitionError
from nnfuzz.generate import binning, instantiate
from nnfuzz.generate.opset import op_weights
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.generate.solver import LocalSolver
from nnfuzz.generate.concrete import ConcreteChecks
from nnfuzz.generate.graph_state import GraphState
from nnfuzz.generate.guide import Guide
from nnfuzz.generate.pools import OpPools
from nnfuzz.gir import GraphIR

# (op set, op class) -> (its tables, [(dtype row, kinds its input slots accept)]), for class-table skeletons
_ROW_KINDS: Dict[tuple, list] = {}
_PER_INSTANCE = frozenset({"in_dtypes", "inp_dtypes", "out_dtypes", "inp_ranks", "weight_inputs"})

# An input slot is either an existing var name or a (rank, dtype) for a new placeholder.
Slot = Union[str, Tuple[int, DType]]


class GraphGenerator(OpPools, ConcreteChecks, GraphState):
    def __init__(self, policy: GenPolicy, ops: List[type], rows: Optional[Dict[str, set]] = None,
                 guide: Optional[Guide] = None):
        """``rows`` optionally limits ops to dtype rows: op name -> {(in_dtypes, out_dtypes), ...}
        (what a backend was probed to support); ops not named keep every row. ``guide``: the coverage
        state's weights (generate/guide.py), used under ``mgen.guide=coverage``; None draws unguided."""
        self.policy = policy
        self.guide = guide if policy.guide == "coverage" else None
        self.row_limits = rows or {}
        self.rng = random.Random(policy.seed)
        self.ops = list(ops)
        self.op_weights = op_weights(self.ops, policy)
        self.allowed = policy.dtype_set
        self.solver = LocalSolver(policy.solver_timeout_ms, self.rng)
        self._reset_state()
        self.uid = 0
        self._init_pools()
        # how insertions were settled: a binned guess, propagation and sampling, or Z3; z3_calls counts
        # the Z3 fallbacks, prop_unsat the insertions propagation proved impossible (Z3 not asked)
        self.stats = {"forward": 0, "backward": 0, "guess_hits": 0, "prop_hits": 0, "z3_hits": 0, "failed": 0,
                      "z3_calls": 0, "prop_unsat": 0}
        self._z3_only: set = set()  # op classes whose rules build z3 terms themselves (found in this graph)
        self.values = None  # value-aware generation's hook (nnfuzz/generate/valueaware.py), if set

    # ---- top level ---------------------------------------------------------------------------
    def generate(self) -> GraphIR:
        p = self.policy
        deadline = time.monotonic() + p.graph_timeout_s
        self._seed_placeholder()
        failures = 0
        while len(self.insts) < p.max_nodes and failures < p.max_attempts and time.monotonic() < deadline:
            backward = self.placeholders and self.rng.random() >= p.forward_prob
            ok = self._backward() if backward else self._forward()
            if ok:
                self.stats["backward" if backward else "forward"] += 1
            else:
                failures += 1
                self.stats["failed"] += 1
                if not self.insts and failures % 10 == 0:  # the first tensor suits nothing: start over
                    self._reset_state()
                    self._seed_placeholder()
        if not self.insts:
            raise ConstraintError(
                f"could not insert any operator in {failures} attempts (ops: {[c.name for c in self.ops][:20]}...)"
            )
        return self._finalize()

    def _seed_placeholder(self) -> None:
        """The first placeholder takes its dtype and rank from a randomly drawn op that can consume it."""
        for _ in range(100):
            cls, kw, n_var, skel = self._draw_op()
            if skel is None:
                continue
            rows = [r for r in self._rows(skel) if not skel.in_dtypes[r][0].quant_only]  # (DType.quant_only)
            ranks = [r for r in (skel.inp_ranks[0] if rows and skel.n_inputs else ()) if r <= self.policy.max_rank]
            if ranks:
                break
        else:
            raise ConstraintError(f"no operator accepts any of the dtypes {sorted(self.policy.dtypes)}")
        dt = skel.in_dtypes[self._pick_row(cls.name, rows, skel.in_dtypes)][0]
        rank = self.rng.choice(ranks)
        shape = [binning.sample(self.rng.choice(binning.SIZE_BINS[:5]), self.rng) for _ in range(rank)]
        while arith.prod(shape) > self.policy.max_elems:
            i = shape.index(max(shape))
            shape[i] = max(1, shape[i] // 2)
        self._new_var(AbsTensor(shape, dt), placeholder=True)

    # ---- insertion strategies ----------------------------------------------------------------
    def _forward(self) -> bool:
        cls, kw, n_var, skel = self._draw_op(self._consumers_pool())
        if skel is None:
            return False
        options = self._takes_some(skel)
        if not options:
            return False
        in_row = self.rng.choice(options) if self.guide is None else \
            options[self._pick_row(cls.name, range(len(options)), options)]
        ranks, weights = skel.inp_ranks, skel.weight_inputs
        cands = [[] if i in weights else self._candidates(in_row[i], ranks[i]) for i in range(len(ranks))]
        live = [i for i, c in enumerate(cands) if c]
        anchor = self.rng.choice(live)
        slots: List[Optional[Slot]] = [None] * skel.n_inputs
        slots[anchor] = self.rng.choice(cands[anchor]) if self.guide is None else self._pick_anchor(cls.name, cands[anchor])
        arank = self.vars[slots[anchor]].ndims
        for i in range(skel.n_inputs):
            if slots[i] is not None:
                continue
            c = [v for v in cands[i] if not skel.same_inp_dims or self.vars[v].ndims == arank]
            if c and self.rng.random() < self.policy.reuse_prob:
                slots[i] = self.rng.choice(c)
            else:
                slots[i] = (self._placeholder_rank(skel, i, arank), in_row[i])
        return self._insert(cls, kw, n_var, slots, target=None)

    def _pick_row(self, op_name: str, indices, rows) -> int:
        """One of ``indices`` into ``rows`` (input dtype rows): uniform, or by the guide's row factors."""
        indices = list(indices)
        if self.guide is None:
            return self.rng.choice(indices)
        return self.rng.choices(indices, weights=[self.guide.row_factor(op_name, rows[k]) for k in indices])[0]

    def _pick_anchor(self, op_name: str, cands: List[str]) -> str:
        """The existing tensor a guided forward insertion consumes: by the guide's edge factors."""
        made_by = {v: i.op.name for i in self.insts for v in i.outputs}
        return self.rng.choices(cands, weights=[self.guide.edge_factor(made_by.get(v), op_name) for v in cands])[0]

    def _takes_some(self, skel) -> list:
        """The dtype rows of ``skel`` in which some input slot can take an existing tensor."""
        if _PER_INSTANCE.isdisjoint(skel.__dict__):  # class tables: each row's takeable kinds, cached
            cls = type(skel)
            tables = (cls.in_dtypes, cls.out_dtypes, cls.inp_ranks, cls.weight_inputs)
            hit = _ROW_KINDS.get((self._ops_key, cls))
            if hit is None or any(a is not b for a, b in zip(hit[0], tables)):  # (tables replaced since)
                hit = _ROW_KINDS[(self._ops_key, cls)] = (tables, self._row_kinds(skel))
            kinds = self._kinds()
            return [row for row, takes in hit[1] if not takes.isdisjoint(kinds)]
        ranks, weights = skel.inp_ranks, skel.weight_inputs
        return [row for row in (skel.in_dtypes[r] for r in self._rows(skel))
                if any(i not in weights and self._has_candidate(row[i], ranks[i]) for i in range(len(ranks)))]

    def _row_kinds(self, skel) -> list:
        """(row, the (dtype, rank) kinds its non-weight input slots accept) for each usable dtype row."""
        ranks, weights = skel.inp_ranks, skel.weight_inputs
        out = []
        for r in self._rows(skel):
            row = skel.in_dtypes[r]
            out.append((row, frozenset((row[i], k) for i in range(len(ranks)) if i not in weights for k in ranks[i])))
        return out

    def _backward(self) -> bool:
        target = self.rng.choice(self.placeholders)
        t = self.vars[target]
        cls, kw, n_var, skel = self._draw_op(self._producers_pool(t))
        if skel is None or skel.n_outputs != 1 or t.ndims not in skel.out_ranks[0]:
            return False
        if not any(o == (t.dtype,) for o in (skel.out_dtypes[i] for i in self._rows(skel))):
            return False
        try:
            pairs = skel.checked_deduct([t], self.rng)
        except ConstraintError:
            return False
        if any(dt not in self.allowed or r > self.policy.max_rank for r, dt in pairs):
            return False
        banned = self._descendants(target)
        slots: List[Slot] = []
        for i, (r, dt) in enumerate(pairs):
            c = [] if i in skel.weight_inputs else [v for v in self._candidates(dt, (r,)) if v not in banned]
            if c and self.rng.random() < self.policy.reuse_prob:
                slots.append(self.rng.choice(c))
            else:
                slots.append((r, dt))
        return self._insert(cls, kw, n_var, slots, target=target)

    # ---- the insertion itself ----------------------------------------------------------------
    def _insert(self, cls, kw, n_var, slots: List[Slot], target: Optional[str]) -> bool:
        """Binned guesses checked concretely; else propagation and sampling; else Z3 (``_solve``)."""
        names = cls.sym_param_names(n_var)
        refs = [self.vars[s] for s in slots if isinstance(s, str)] + ([self.vars[target]] if target else [])
        index_bound = max([r.ndims for r in refs] + [s[0] for s in slots if not isinstance(s, str)] + [1]) + 1
        kinds = [cls.attr_kind(n) for n in names]
        if self.policy.binning:
            for _ in range(self.policy.guesses):
                vals = [self._guess_attr(k, index_bound) for k in kinds]
                shapes = [None if isinstance(s, str) else self._guess_shape(s[0], refs) for s in slots]
                got = self._try_concrete(cls, vals, kw, slots, shapes, target)
                if got is not None:
                    self.stats["guess_hits"] += 1
                    return self._commit(got, slots, target)
        if not names and all(isinstance(s, str) for s in slots):
            got = self._try_concrete(cls, [], kw, slots, [None] * len(slots), target)  # nothing to solve
            how = "guess_hits"
        else:
            got, how = self._solve(cls, names, kinds, kw, slots, target, index_bound)
        if got is None:
            return False
        self.stats[how] += 1
        return self._commit(got, slots, target)

    def _solve(self, cls, names, kinds, kw, slots, target, index_bound):
        """``(insertion or None, stats key)``: by propagation and sampling (nnfuzz/generate/instantiate.py),
        with Z3 for what that leaves open, for ops whose rules call z3 themselves, and without binning
        (where the point is Z3's own choice of values)."""
        if self.policy.binning and cls not in self._z3_only:
            try:
                problem = instantiate.pose(self, cls, names, kinds, kw, slots, target)
            except instantiate.Unposable:
                self._z3_only.add(cls)  # its rules build z3 terms themselves: Z3 from now on, in this graph
                problem = "z3"
            if problem is None:
                return None, "prop_hits"
            if problem != "z3":
                got = instantiate.solve(problem, self.rng, index_bound, self.policy.max_elems)
                if got == "unsat":
                    self.stats["prop_unsat"] += 1
                    return None, "prop_hits"
                if got is not None:
                    found = self._checked_solution(cls, names, kw, slots, target, got[0], got[1],
                                                   "propagation and sampling")
                    if found is not None:
                        return found, "prop_hits"
        self.stats["z3_calls"] += 1
        return self._solve_z3(cls, names, kinds, kw, slots, target, index_bound), "z3_hits"

    def _checked_solution(self, cls, names, kw, slots, target, attr_vals, shapes, who: str):
        """The insertion a solver's values give, None if they overshoot the element budget; an op whose
        concrete rules reject values its symbolic rules accept is an OpDefinitionError."""
        got, why = self._check_concrete(cls, attr_vals, kw, slots, shapes, target)
        if got is not None or why == "elems":
            return got
        raise OpDefinitionError(
            f"{cls.name}: {who} found attributes {dict(zip(names, attr_vals))} and input shapes {shapes} "
            f"satisfying the symbolic rules, but on those concrete values {why}; type_transfer/requires "
            "must not branch on symbolic values, and // or % need a divisor that requires keeps >= 1 "
            "(Z3 and Python differ for negative divisors: docs/operator-api.md)"
        )

    def _solve_z3(self, cls, names, kinds, kw, slots, target, index_bound):
        """Pose the insertion to Z3. Element bounds are kept linear: first each dim <= max_elems with
        the product checked afterwards; if that overshoots, once more with a random per-dim budget
        (dims <= 2**b_i with sum(b_i) <= log2(max_elems)), which bounds the product exactly."""
        self.uid += 1
        ctx = self.solver.ctx
        syms = [z3.Int(f"n{self.uid}_{n}", ctx) for n in names]
        dims: List[z3.ArithRef] = []
        inputs, fresh = [], []
        for k, s in enumerate(slots):
            if isinstance(s, str):
                inputs.append(self.vars[s])
            else:
                shape = [z3.Int(f"n{self.uid}_in{k}_{d}", ctx) for d in range(s[0])]
                dims += shape
                inputs.append(AbsTensor(shape, s[1]))
                fresh.append(inputs[-1])
        try:
            op = cls(*syms, **kw)
            outs = op.checked_type_transfer(inputs)
            cons = op.checked_requires(inputs)
        except ConstraintError:
            return None
        cons += [d >= 1 for d in dims] + [d <= self.policy.max_elems for d in dims]
        cons += self._output_constraints(outs, target, symbolic=True)
        cons = [c for c in cons if c is not True]
        if any(c is False for c in cons):
            return None
        prefs = []
        if self.policy.binning:
            for v, kind in zip(syms, kinds):
                b = binning.pick_bin(kind, self.rng, index_bound)
                if b is not None:
                    prefs.append(binning.preference(v, b, self.rng))
            for v in dims:
                prefs.append(binning.preference(v, self.rng.choice(binning.SIZE_BINS[:5]), self.rng))
        modest = [z3.And(v >= -binning.MODEST, v <= binning.MODEST) for v in syms] if syms else []
        for budgeted in (False, True):
            extra = self._budgets(fresh + outs) if budgeted else []
            vals = self.solver.solve(cons + extra, prefs, syms + dims, fallback=modest if prefs else ())
            if vals is None:
                return None
            attr_vals, dim_vals = vals[: len(syms)], vals[len(syms):]
            shapes, pos = [], 0
            for s in slots:
                if isinstance(s, str):
                    shapes.append(None)
                else:
                    shapes.append(dim_vals[pos: pos + s[0]])
                    pos += s[0]
            got = self._checked_solution(cls, names, kw, slots, target, attr_vals, shapes, "Z3")
            if got is not None:
                return got
        return None

    def _budgets(self, tensors: List[AbsTensor]) -> list:
        """Linear constraints bounding each tensor's element count by a random split of its log2."""
        bits = max(0, self.policy.max_elems.bit_length() - 1)
        cons = []
        for t in tensors:
            if not t.ndims or t.is_concrete():
                continue
            cuts = sorted(self.rng.randint(0, bits) for _ in range(t.ndims - 1))
            shares = [b - a for a, b in zip([0] + cuts, cuts + [bits])]
            cons += [d <= (1 << b) for d, b in zip(t.shape, shares) if arith.is_sym(d)]
        return cons
