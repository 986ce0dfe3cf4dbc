"""Graph construction by forward and backward insertion, one local problem per insertion.

Forward: a new op consumes an existing tensor (plus other existing tensors or new placeholders).
Backward: a new op produces an existing placeholder, its inputs being new placeholders or existing
tensors that do not depend on that placeholder. Every insertion first tries a few binned guesses
checked in plain Python; if none fits, the same rules are posed to Z3 with binning preferences.
Either way the result is re-checked concretely before it enters the graph.
"""
from __future__ import annotations

import random
import time
from typing import Dict, List, Optional, Tuple, Union

import z3

from nnfuzz.abstract import arith
from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.abstract.ranges import UNKNOWN, VRange, for_dtype, infeasible, propagate
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError, InternalError
from nnfuzz.generate import binning
from nnfuzz.generate.opset import allowed_rows, op_weight
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.generate.solver import LocalSolver
from nnfuzz.gir import GraphIR, Inst

# (ops, weights, dtypes, what) -> the (ops, weights) that fit: shared by generators in a process
_POOL_CACHE: Dict[tuple, tuple] = {}

# An input slot is either an existing var name or a (rank, dtype) for a new placeholder.
Slot = Union[str, Tuple[int, DType]]


class GraphGenerator:
    def __init__(self, policy: GenPolicy, ops: List[type], rows: Optional[Dict[str, set]] = None):
        """``rows`` optionally limits ops to dtype rows: op name -> {(in_dtypes, out_dtypes), ...}
        (what a backend was probed to support); ops not named keep every row."""
        self.policy = policy
        self.row_limits = rows or {}
        self.rng = random.Random(policy.seed)
        self.ops = list(ops)
        self.op_weights = [op_weight(c, policy) for c in self.ops]
        self.allowed = policy.dtype_set
        self.solver = LocalSolver(policy.solver_timeout_ms, self.rng)
        self.vars: Dict[str, AbsTensor] = {}
        self.placeholders: List[str] = []
        self.ranges: Dict[str, VRange] = {}  # var -> value range (policy.value_ranges)
        self.insts: List[Inst] = []
        self.uid = 0
        self._ops_key = hash((tuple(self.ops), tuple(self.op_weights), self.allowed,
                             tuple(sorted((k, frozenset(v)) for k, v in self.row_limits.items()))))
        self.stats = {"forward": 0, "backward": 0, "guess_hits": 0, "z3_hits": 0, "failed": 0}

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
                    self.vars.clear()
                    self.placeholders.clear()
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
            rows = self._rows(skel) if skel is not None else []
            ranks = [r for r in (skel.inp_ranks[0] if rows and skel.n_inputs else ()) if r <= self.policy.max_rank]
            if ranks:
                break
        else:
            raise ConstraintError(f"no operator accepts any of the dtypes {sorted(self.policy.dtypes)}")
        dt = skel.in_dtypes[self.rng.choice(rows)][0]
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
        options = []  # (row, candidates per slot) for rows where some slot can take an existing tensor
        for r in self._rows(skel):
            row = skel.in_dtypes[r]
            cands = [[] if i in skel.weight_inputs else self._candidates(row[i], skel.inp_ranks[i])
                     for i in range(skel.n_inputs)]
            if any(cands):
                options.append((row, cands))
        if not options:
            return False
        in_row, cands = self.rng.choice(options)
        live = [i for i, c in enumerate(cands) if c]
        anchor = self.rng.choice(live)
        slots: List[Optional[Slot]] = [None] * skel.n_inputs
        slots[anchor] = self.rng.choice(cands[anchor])
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
        else:
            got = self._solve(cls, names, kinds, kw, slots, target, index_bound)
        if got is None:
            return False
        self.stats["z3_hits"] += 1
        return self._commit(got, slots, target)

    def _solve(self, cls, names, kinds, kw, slots, target, index_bound):
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
            got, why = self._check_concrete(cls, attr_vals, kw, slots, shapes, target)
            if got is not None:
                return got
            if why != "elems":
                raise InternalError(
                    f"{cls.name}: Z3 found attributes {dict(zip(names, attr_vals))} and input shapes {shapes} "
                    f"satisfying the symbolic rules, but on those concrete values {why}; "
                    "type_transfer/requires must not branch on symbolic values"
                )
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

    def _try_concrete(self, cls, vals, kw, slots, shapes, target):
        return self._check_concrete(cls, vals, kw, slots, shapes, target)[0]

    def _check_concrete(self, cls, vals, kw, slots, shapes, target):
        """``((op, inputs, outputs), "")`` if the concrete insertion is valid, else ``(None, reason)``."""
        inputs = [self.vars[s] if isinstance(s, str) else AbsTensor(shape, s[1]) for s, shape in zip(slots, shapes)]
        for t in inputs:
            if any(d < 1 for d in t.shape):
                return None, "an input dim < 1"
            if t.nelement() > self.policy.max_elems:
                return None, "elems"
        try:
            op = cls(*vals, **kw)
            if op.checked_requires(inputs):  # requires first: type_transfer may divide by a bad attribute
                return None, "requires fails"
            outs = op.checked_type_transfer(inputs)
        except ConstraintError:
            return None, "the constructor refused them"
        for c in self._output_constraints(outs, target, symbolic=False):
            if c is False:
                return None, "elems" if any(o.nelement() > self.policy.max_elems for o in outs) \
                    and all(d >= 1 for o in outs for d in o.shape) else "an output is invalid"
        return (op, inputs, outs), ""

    def _output_constraints(self, outs: List[AbsTensor], target: Optional[str], symbolic: bool) -> list:
        cons = []
        for o in outs:
            if o.ndims > self.policy.max_rank:
                return [False]
            cons += [d >= 1 for d in o.shape]
            if symbolic:
                cons += [d <= self.policy.max_elems for d in o.shape]
            else:
                cons.append(o.nelement() <= self.policy.max_elems)
        if target is not None:
            t = self.vars[target]
            cons += outs[0].same_shape_as(t)
            if outs[0].dtype != t.dtype:
                cons.append(False)
        return cons

    def _commit(self, got, slots, target) -> bool:
        op, inputs, outs = got
        in_names = [s if isinstance(s, str) else self._new_var(t, placeholder=True) for s, t in zip(slots, inputs)]
        at = None
        if target is None:
            out_names = [self._new_var(o) for o in outs]
        else:
            out_names = [target]
            at = self.placeholders.index(target)
            self.placeholders.remove(target)
        inst = Inst(op, in_names, out_names)
        self.insts.append(inst)
        if self.policy.value_ranges and not self._ranges_ok(inst, target):
            self._undo(inst, slots, target, at)
            self.stats["infeasible"] = self.stats.get("infeasible", 0) + 1
            return False
        return True

    def _ranges_ok(self, inst: Inst, target: Optional[str]) -> bool:
        """Value ranges after adding ``inst``: False if some op's domain can no longer hold.
        A forward insertion only needs its own inputs' ranges; a backward one changes what flows
        into the target's consumers, so the whole graph is re-analysed."""
        if target is None:
            return self._range_step(inst, self.ranges)
        ranges: Dict[str, VRange] = {}
        for p in self.placeholders:
            ranges[p] = for_dtype(self.vars[p].dtype)
        for i in _topo_sort(self.insts, set(self.placeholders)):
            if not self._range_step(i, ranges):
                return False
        self.ranges = ranges
        return True

    def _range_step(self, inst: Inst, ranges: Dict[str, VRange]) -> bool:
        ts = [self.vars[v] for v in inst.inputs]
        rs = [ranges.get(v) or for_dtype(t.dtype) for v, t in zip(inst.inputs, ts)]
        rs = [r if arith.prod([int(d) for d in t.shape]) else UNKNOWN for r, t in zip(rs, ts)]
        if infeasible(inst.op, rs):
            return False
        ranges.update(zip(inst.outputs, propagate(inst.op, rs, ts, len(inst.outputs), inst.inputs)))
        return True

    def _undo(self, inst: Inst, slots, target, at) -> None:
        self.insts.pop()
        for s, v in zip(slots, inst.inputs):
            if not isinstance(s, str):
                self.placeholders.remove(v)
                del self.vars[v]
        if target is None:
            for v in inst.outputs:
                del self.vars[v]
        else:
            self.placeholders.insert(at, target)

    # ---- helpers -----------------------------------------------------------------------------
    def _draw_op(self, pool=None):
        """Draw an op class by weight from ``pool`` (default: all), its choices and a skeleton."""
        ops, weights = pool if pool is not None else (self.ops, self.op_weights)
        if not ops:
            return None, None, 0, None
        cls = self.rng.choices(ops, weights=weights)[0]
        kw = {k: self.rng.choice(list(cls.attr_choices[k])) for k in cls._kw_params}
        n_var = self.rng.choice(cls.num_var_param) if cls.num_var_param else 0
        try:
            skel = cls(*([1] * len(cls.sym_param_names(n_var))), **kw)
        except ConstraintError:
            return cls, kw, n_var, None
        return cls, kw, n_var, skel

    def _pool(self, key, fits):
        """The (ops, weights) that ``fits`` admits, cached under ``key``."""
        key = (self._ops_key, key)
        hit = _POOL_CACHE.get(key)
        if hit is None and fits is None:
            hit = _POOL_CACHE[key] = {c: self._takes(c) for c in self.ops}
        elif hit is None:
            pairs = [(c, w) for c, w in zip(self.ops, self.op_weights) if fits(c)]
            hit = _POOL_CACHE[key] = ([c for c, _ in pairs], [w for _, w in pairs])
            if len(_POOL_CACHE) > 20000:
                _POOL_CACHE.clear()
        return hit

    def _consumers_pool(self):
        """Ops whose class tables say they can take some existing tensor as some input."""
        kinds = frozenset((t.dtype, t.ndims) for t in self.vars.values())
        takes = self._pool(("takes",), None)

        def fits(cls) -> bool:
            return takes[cls] is None or not takes[cls].isdisjoint(kinds)

        return self._pool(("in", kinds), fits)

    def _takes(self, cls):
        """The (dtype, rank) pairs ``cls``'s class tables accept on some input (None: per instance)."""
        if _instance_tables(cls):
            return None
        rows = [cls.in_dtypes[k] for k in self._rows(cls)]
        return frozenset((row[i], rk) for row in rows for i, viable in enumerate(cls.inp_ranks)
                         if i < len(row) for rk in viable)

    def _producers_pool(self, t: AbsTensor):
        """Single-output ops whose class tables say they can produce a tensor like ``t``."""
        def fits(cls) -> bool:
            return len(cls.out_ranks) == 1 and t.ndims in cls.out_ranks[0] and any(
                cls.out_dtypes[k] == (t.dtype,) for k in self._rows(cls))

        return self._pool(("out", t.dtype, t.ndims), fits)

    def _rows(self, op) -> List[int]:
        return allowed_rows(op, self.allowed, self.row_limits.get(op.name))

    def _candidates(self, dtype: DType, viable) -> List[str]:
        return [v for v, t in self.vars.items() if t.dtype == dtype and t.ndims in viable]

    def _placeholder_rank(self, skel, i: int, anchor_rank: int) -> int:
        viable = [r for r in skel.inp_ranks[i] if r <= self.policy.max_rank] or list(skel.inp_ranks[i])
        if skel.same_inp_dims or (anchor_rank in viable and self.rng.random() < 0.5):
            return anchor_rank if anchor_rank in viable else self.rng.choice(viable)
        return self.rng.choice(viable)

    def _guess_attr(self, kind: str, index_bound: int) -> int:
        b = binning.pick_bin(kind, self.rng, index_bound)
        return binning.sample(b, self.rng) if b is not None else self.rng.randint(-2, 8)

    def _guess_shape(self, rank: int, refs: List[AbsTensor]) -> List[int]:
        """A binned guess for a new placeholder: often a reference tensor's shape (or its suffix),
        otherwise each dim copied from an aligned reference dim, 1, or a binned size."""
        whole = [t.shape[t.ndims - rank:] for t in refs if t.ndims >= rank]
        if whole and self.rng.random() < 0.5:
            return [int(d) for d in self.rng.choice(whole)]
        shape = []
        for d in range(rank):
            r = self.rng.random()
            aligned = [t.shape[t.ndims - rank + d] for t in refs if t.ndims - rank + d >= 0]
            if aligned and r < 0.6:
                shape.append(int(self.rng.choice(aligned)))
            elif r < 0.75:
                shape.append(1)
            else:
                shape.append(binning.sample(self.rng.choice(binning.SIZE_BINS[:5]), self.rng))
        return shape

    def _descendants(self, var: str) -> set:
        out = {var}
        changed = True  # instructions are not in topological order yet: iterate to a fixed point
        while changed:
            changed = False
            for inst in self.insts:
                if any(v in out for v in inst.inputs) and not all(v in out for v in inst.outputs):
                    out.update(inst.outputs)
                    changed = True
        return out

    def _new_var(self, t: AbsTensor, placeholder: bool = False) -> str:
        self.uid += 1
        name = f"{'p' if placeholder else 'v'}{self.uid}"
        self.vars[name] = t
        if placeholder:
            self.placeholders.append(name)
        return name

    def _finalize(self) -> GraphIR:
        insts = _topo_sort(self.insts, set(self.placeholders))
        placeholders = [p for p in self.placeholders]
        weights = [p for p in placeholders if self.rng.random() < self.policy.weight_prob]
        if len(weights) == len(placeholders):
            weights = weights[1:]
        inputs = [p for p in placeholders if p not in weights]
        consumed = {v for i in insts for v in i.inputs}
        outputs = [v for i in insts for v in i.outputs if v not in consumed]
        rename: Dict[str, str] = {}
        for k, v in enumerate(inputs):
            rename[v] = f"i{k}"
        for k, v in enumerate(weights):
            rename[v] = f"w{k}"
        for i in insts:
            for v in i.outputs:
                rename[v] = f"v{len(rename) - len(inputs) - len(weights)}"
        gir = GraphIR(
            vars={rename[v]: self.vars[v] for v in rename},
            inputs=[rename[v] for v in inputs],
            weights=[rename[v] for v in weights],
            insts=[Inst(i.op, [rename[v] for v in i.inputs], [rename[v] for v in i.outputs]) for i in insts],
            outputs=[rename[v] for v in outputs],
        )
        return gir.check()


def _topo_sort(insts: List[Inst], placeholders: set) -> List[Inst]:
    ready = set(placeholders)
    pending = list(insts)
    out: List[Inst] = []
    while pending:
        for k, inst in enumerate(pending):
            if all(v in ready for v in inst.inputs):
                out.append(inst)
                ready.update(inst.outputs)
                del pending[k]
                break
        else:
            raise InternalError("generated graph has a cycle: " + ", ".join(repr(i.op) for i in pending))
    return out


def _instance_tables(cls) -> bool:
    """True when ``cls`` (or a base) sets its rank/dtype tables per instance in ``__init__``."""
    for klass in cls.__mro__:
        if klass is AbsOpBase:
            return False
        code = getattr(klass.__dict__.get("__init__"), "__code__", None)
        if code is not None and {"inp_ranks", "in_dtypes"} & set(code.co_names):
            return True
    return False
