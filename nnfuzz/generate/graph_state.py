"""The graph under construction: its variables and placeholders, committing or undoing an insertion
(after the value-range check), and the finished GraphIR.

Every per-insertion query is kept independent of the graph's size: vars are indexed by (dtype, rank)
for candidate lookup, each var knows the instructions that read it (descendants and the value-range
update walk only the affected cone), and the topological sort is linear (up to a log factor)."""
from __future__ import annotations

import heapq
from typing import Dict, Iterable, List, Optional

from nnfuzz.abstract.ranges import UNKNOWN, VRange, for_dtype, infeasible, propagate, quiet_numpy
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.abstract.dtype import DType
from nnfuzz.errors import InternalError
from nnfuzz.gir import GraphIR, Inst


class GraphState:
    """GraphGenerator's graph bookkeeping (uses its vars, placeholders, insts, ranges, uid, rng, policy).
    ``_reset_state`` sets up the indexes; ``_new_var``/``_forget_var``/``_commit``/``_undo`` keep them."""

    def _reset_state(self) -> None:
        self.vars: Dict[str, AbsTensor] = {}
        self.placeholders: List[str] = []
        self.ranges: Dict[str, VRange] = {}  # var -> value range (policy.value_ranges)
        self.insts: List[Inst] = []
        self._by_dtype: Dict[DType, Dict[str, int]] = {}  # dtype -> {var: rank}, in creation order
        self._ranks: Dict[DType, Dict[int, int]] = {}  # dtype -> {rank: number of vars}
        self._readers: Dict[str, List[int]] = {}  # var -> indices in insts of the instructions reading it
        self._cands: Dict[tuple, List[str]] = {}  # memo of _candidates, emptied when vars change
        self._kinds_memo: Optional[frozenset] = None  # memo of _kinds, reset when a kind comes or goes

    def _commit(self, got, slots, target) -> bool:
        op, inputs, outs = got
        if any(not isinstance(s, str) and t.dtype.quant_only for s, t in zip(slots, inputs)):
            return False  # a quantized-tensor type (DType.quant_only) comes from a QuantizeLinear, never a placeholder
        in_names = [s if isinstance(s, str) else self._new_var(t, placeholder=True) for s, t in zip(slots, inputs)]
        at = None
        if target is None:
            out_names = [self._new_var(o) for o in outs]
        else:
            out_names = [target]
            at = self.placeholders.index(target)
            self.placeholders.remove(target)
        inst = Inst(op, in_names, out_names)
        k = len(self.insts)
        self.insts.append(inst)
        for v in dict.fromkeys(in_names):
            self._readers.setdefault(v, []).append(k)
        saved = (dict(self.ranges), self.values.snapshot()) if self.values is not None else None
        if self.policy.value_ranges and not self._ranges_ok(inst, target):
            self._undo(inst, slots, target, at)
            self.stats["infeasible"] = self.stats.get("infeasible", 0) + 1
            return False
        if saved is not None and not self.values.accept(self):  # value-aware: no safe values found
            self.ranges = saved[0]
            self.values.restore(saved[1])
            self._undo(inst, slots, target, at)
            self.stats["unsafe_values"] = self.stats.get("unsafe_values", 0) + 1
            return False
        if target is None and any(o.dtype.quant_only for o in outs) and not self._close(inst):
            if saved is not None:
                self.values.restore(saved[1])
            self._undo(inst, slots, target, at)
            return False
        return True

    def _close(self, inst) -> bool:
        """Read each quantized-tensor output of ``inst`` (just committed) back with the op's ``closing()``
        DequantizeLinear, so that such a type is never a graph output; False (nothing added) when the
        closing op is not among the generator's ops or rows, or would pass ``max_nodes``."""
        made = []
        for v in inst.outputs:
            if not self.vars[v].dtype.quant_only:
                continue
            closer = inst.op.closing()
            cls, t = type(closer), self.vars[v]
            row = ((t.dtype,), tuple(o.dtype for o in closer.checked_type_transfer([t])))
            limit = self._limits.get(cls.name)
            ok = (cls in self.ops and len(self.insts) < self.policy.max_nodes and set(row[0] + row[1]) <= self.allowed
                  and (limit is None or row in limit))
            if not ok or not self._commit((closer, [t], closer.checked_type_transfer([t])), [v], None):
                for done in reversed(made):
                    self._undo(done, [v], None, None)
                return False
            made.append(self.insts[-1])
        return True

    def _ranges_ok(self, inst: Inst, target: Optional[str]) -> bool:
        """Value ranges after adding ``inst``: False if some op's domain can no longer hold.
        A forward insertion only needs its own inputs' ranges; a backward one changes what flows
        out of the target, so the instructions downstream of it whose input ranges change are
        re-analysed, in dependency order (the rest keep theirs: the rules are pure functions)."""
        with quiet_numpy():
            if target is None:
                return self._range_step(inst, self.ranges)
            changed = _Overlay(self.ranges)
            if not self._range_step(inst, changed):
                return False
            if changed[target] != self._range_of(target):
                cone = sorted({k for v in self._descendants(target) for k in self._readers.get(v, ())})
                for i in topological_order([self.insts[k] for k in cone]):
                    if any(v in changed for v in i.inputs):
                        outs = _Overlay(changed)
                        if not self._range_step(i, outs):
                            return False
                        changed.update((v, r) for v, r in outs.items() if r != self._range_of(v))
            self.ranges.update(changed)
            return True

    def _range_of(self, var: str) -> VRange:
        """The committed value range of ``var``."""
        return self.ranges.get(var) or for_dtype(self.vars[var].dtype)

    def _range_step(self, inst: Inst, ranges: Dict[str, VRange]) -> bool:
        ts = [self.vars[v] for v in inst.inputs]
        rs = [ranges.get(v) or for_dtype(t.dtype) for v, t in zip(inst.inputs, ts)]
        rs = [UNKNOWN if 0 in t.shape else r for r, t in zip(rs, ts)]  # an empty tensor holds no values
        if infeasible(inst.op, rs):
            return False
        ranges.update(zip(inst.outputs, propagate(inst.op, rs, ts, len(inst.outputs), inst.inputs)))
        return True

    def _undo(self, inst: Inst, slots, target, at) -> None:
        self.insts.pop()
        for v in dict.fromkeys(inst.inputs):
            readers = self._readers[v]
            readers.pop()  # the undone instruction is the last to read it
            if not readers:
                del self._readers[v]
        for s, v in zip(slots, inst.inputs):
            if not isinstance(s, str):
                self.placeholders.remove(v)
                self._forget_var(v)
        if target is None:
            for v in inst.outputs:
                self._forget_var(v)
        else:
            self.placeholders.insert(at, target)

    def _candidates(self, dtype: DType, viable: Iterable[int]) -> List[str]:
        """Existing vars of ``dtype`` with a rank in ``viable``, in creation order (do not modify: shared)."""
        key = (dtype, viable if isinstance(viable, tuple) else tuple(viable))
        hit = self._cands.get(key)
        if hit is None:
            hit = self._cands[key] = [v for v, r in self._by_dtype.get(dtype, {}).items() if r in viable]
        return hit

    def _has_candidate(self, dtype: DType, viable: Iterable[int]) -> bool:
        """Whether ``_candidates(dtype, viable)`` is non-empty."""
        ranks = self._ranks.get(dtype)
        return ranks is not None and not ranks.keys().isdisjoint(viable)

    def _descendants(self, var: str) -> set:
        """``var`` and every var computed from it."""
        out = {var}
        todo = [var]
        while todo:
            for k in self._readers.get(todo.pop(), ()):
                for v in self.insts[k].outputs:
                    if v not in out:
                        out.add(v)
                        todo.append(v)
        return out

    def _new_var(self, t: AbsTensor, placeholder: bool = False) -> str:
        self.uid += 1
        name = f"{'p' if placeholder else 'v'}{self.uid}"
        self.vars[name] = t
        rank = len(t.shape)
        self._by_dtype.setdefault(t.dtype, {})[name] = rank
        ranks = self._ranks.setdefault(t.dtype, {})
        if rank not in ranks:
            ranks[rank] = 0
            self._kinds_memo = None
        ranks[rank] += 1
        self._cands.clear()
        if placeholder:
            self.placeholders.append(name)
        return name

    def _forget_var(self, name: str) -> None:
        t = self.vars.pop(name)
        rank = self._by_dtype[t.dtype].pop(name)
        ranks = self._ranks[t.dtype]
        ranks[rank] -= 1
        if not ranks[rank]:
            del ranks[rank]
            self._kinds_memo = None
        self._cands.clear()

    def _kinds(self) -> frozenset:
        """The (dtype, rank) pairs of the existing vars."""
        if self._kinds_memo is None:
            self._kinds_memo = frozenset((dt, r) for dt, ranks in self._ranks.items() for r in ranks)
        return self._kinds_memo

    def _finalize(self) -> GraphIR:
        insts = topological_order(self.insts, set(self.placeholders))
        placeholders = [p for p in self.placeholders]
        weights = [p for p in placeholders if self.rng.random() < self.policy.weight_prob]
        if len(weights) == len(placeholders):
            weights = weights[1:]
        weight_set = set(weights)
        inputs = [p for p in placeholders if p not in weight_set]
        consumed = {v for i in insts for v in i.inputs}
        outputs = [v for i in insts for v in i.outputs if v not in consumed]
        rename: Dict[str, str] = {}
        for k, v in enumerate(inputs):
            rename[v] = f"i{k}"
        for k, v in enumerate(weights):
            rename[v] = f"w{k}"
        n = 0
        for i in insts:
            for v in i.outputs:
                rename[v] = f"v{n}"
                n += 1
        gir = GraphIR(
            vars={rename[v]: self.vars[v] for v in rename},
            inputs=[rename[v] for v in inputs],
            weights=[rename[v] for v in weights],
            insts=[Inst(i.op, [rename[v] for v in i.inputs], [rename[v] for v in i.outputs]) for i in insts],
            outputs=[rename[v] for v in outputs],
        )
        return gir.check(types=False)  # every insertion passed its op's rules on these types


class _Overlay(dict):
    """Ranges written during one check, read over the committed ones (which stay untouched until
    the check passes)."""

    def __init__(self, base: Dict[str, VRange]):
        super().__init__()
        self.base = base

    def get(self, key, default=None):
        return dict.get(self, key) or self.base.get(key, default)


def topological_order(insts: List[Inst], ready: Optional[set] = None) -> List[Inst]:
    """``insts`` in dependency order, taking at each step the earliest (in list order) whose inputs are
    all available. Inputs are available if in ``ready`` or computed by an instruction already taken;
    with ``ready`` None, every input no instruction in ``insts`` computes is available."""
    producer = {v: k for k, inst in enumerate(insts) for v in inst.outputs}
    waiting: List[int] = []
    readers: Dict[str, List[int]] = {}
    heap = []
    for k, inst in enumerate(insts):
        deps = {v for v in inst.inputs if (v not in ready if ready is not None else v in producer)}
        for v in deps:
            readers.setdefault(v, []).append(k)
        waiting.append(len(deps))
        if not deps:
            heap.append(k)
    heapq.heapify(heap)
    out: List[Inst] = []
    while heap:
        inst = insts[heapq.heappop(heap)]
        out.append(inst)
        for v in inst.outputs:
            for k in readers.get(v, ()):
                waiting[k] -= 1
                if not waiting[k]:
                    heapq.heappush(heap, k)
    if len(out) != len(insts):
        pending = [i for k, i in enumerate(insts) if waiting[k]]
        raise InternalError("generated graph has a cycle or an undefined input: " + ", ".join(repr(i.op) for i in pending))
    return out
