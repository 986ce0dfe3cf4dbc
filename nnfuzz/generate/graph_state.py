"""The graph under construction: its variables and placeholders, committing or undoing an insertion
(after the value-range check), and the finished GraphIR."""
from __future__ import annotations

from typing import Dict, List, Optional

from nnfuzz.abstract import arith
from nnfuzz.abstract.ranges import UNKNOWN, VRange, for_dtype, infeasible, propagate
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.abstract.dtype import DType
from nnfuzz.errors import InternalError
from nnfuzz.gir import GraphIR, Inst


class GraphState:
    """GraphGenerator's graph bookkeeping (uses its vars, placeholders, insts, ranges, uid, rng, policy)."""

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

    def _candidates(self, dtype: DType, viable) -> List[str]:
        return [v for v, t in self.vars.items() if t.dtype == dtype and t.ndims in viable]

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
