"""Value-aware generation: keep one set of safe values for the graph while it grows.

A graph built blind is often unsafe for every value the search can find in its budget (a Log fed
by a chain that is negative almost everywhere, a Mod by a computed zero): at 30 nodes about half of
them. Here the generator carries concrete values instead: each placeholder gets values when it is
created, and after each insertion the ops whose inputs changed are checked once (materialize/check.py): a
forward insertion checks its new op, a backward one (the op now computes a former placeholder) the
op and what depends on it. When the check fails, the values are repaired: first a few fresh draws of
the insertion's new placeholders (the cheap, local fix), then the value search on the graph so far,
from the current values, within ``repair_passes`` forward passes (a budget counted in passes, so the
same seed gives the same graph whatever the load). An insertion that cannot be repaired is undone:
the generator counts it as a failed attempt and draws another.

The hook into the generator (``GraphState._commit``): a generator with a ``values`` tracker takes its
``snapshot`` before committing an insertion and asks ``accept`` after the value-range check; when
accept says no, the generator undoes the insertion and the tracker ``restore``s its values. ``generate_with_values`` sets it up and returns the graph with its values, which the
search then checks once and returns (``SearchResult.passes == 1``).
"""
from __future__ import annotations

import dataclasses
import time
from typing import Dict, List, Optional, Tuple

import numpy as np

from nnfuzz.generate.graph_state import topological_order
from nnfuzz.materialize.search import SearchConfig

REDRAWS = 4  # fresh draws of an insertion's new placeholders before the search is asked


@dataclasses.dataclass
class TrackStats:
    checks: int = 0        # instructions checked
    redraws: int = 0       # insertions made safe by re-drawing their new placeholders
    repairs: int = 0       # insertions made safe by the search
    rejected: int = 0      # insertions undone: no safe values found
    check_ms: float = 0.0  # CPU time in checks and re-draws
    repair_ms: float = 0.0  # CPU time in the search's repairs


class ValueTracker:
    """Values for every var of a GraphGenerator's graph under construction, all safe."""

    def __init__(self, cfg: SearchConfig, seed: int, repair_passes: int = 8):
        self.cfg = cfg
        self.seed = seed
        self.repair_passes = repair_passes
        self.rng = np.random.default_rng([seed, 5151])
        self.inputs: Dict[str, np.ndarray] = {}   # placeholder -> its values
        self.env: Dict[str, object] = {}          # var -> torch tensor
        self.sur: Dict[str, object] = {}          # integer/bool var -> float64 surrogate
        self.stats = TrackStats()
        self._repair_ms = 0.0

    # ---- the generator's hook ----------------------------------------------------------------
    def snapshot(self) -> tuple:
        """The tracker's own state (the generator undoes its insertion itself: GraphState._commit)."""
        return dict(self.inputs), dict(self.env), dict(self.sur)

    def restore(self, snap: tuple) -> None:
        self.inputs, self.env, self.sur = (dict(x) for x in snap)

    def accept(self, gen) -> bool:
        """After an insertion (the generator's last instruction): are there safe values for it?"""
        t0 = time.process_time()
        try:
            return self._accept(gen)
        finally:
            self.stats.check_ms += (time.process_time() - t0) * 1000.0 - self._repair_ms

    def _accept(self, gen) -> bool:
        import torch

        self._repair_ms = 0.0
        inst = gen.insts[-1]
        fresh = [p for p in gen.placeholders if p not in self.inputs]
        for p in inst.outputs:  # a backward insertion: the target is computed now
            self.inputs.pop(p, None)
        for p in fresh:
            self._draw(gen, p, 0)
        order = _affected(gen, inst)
        with torch.no_grad():
            if self._check(gen, order):
                return True
            for k in range(1, REDRAWS + 1 if fresh else 1):
                for p in fresh:
                    self._draw(gen, p, k)
                if self._check(gen, order):
                    self.stats.redraws += 1
                    return True
        if self.repair_passes:
            t1 = time.process_time()
            ok = self._repair(gen, order)
            self._repair_ms = (time.process_time() - t1) * 1000.0
            self.stats.repair_ms += self._repair_ms
            if ok:
                self.stats.repairs += 1
                return True
        self.stats.rejected += 1
        return False

    # ---- values ------------------------------------------------------------------------------
    def _draw(self, gen, p: str, restart: int) -> None:
        from nnfuzz.materialize.leaves import fresh_values
        from nnfuzz.materialize.values import consumer_domain, in_domain, random_array, to_torch

        t = gen.vars[p]
        if restart == 0:
            v = random_array(t, self.rng)
        else:
            v = np.asarray(fresh_values(tuple(int(d) for d in t.shape), t.dtype, self.rng, restart))
            v = v.astype(np.float32).astype(t.dtype.numpy()) if t.dtype.is_float else v.astype(t.dtype.numpy())
        dom = consumer_domain(gen.insts[-1:], p)  # a new placeholder feeds the new op only
        if dom is not None:
            v = in_domain(v, dom, t.dtype)
        self.inputs[p] = v
        self.env[p] = to_torch(v, t.dtype)
        self.sur.pop(p, None)

    def _check(self, gen, order) -> bool:
        """Check ``order``'s instructions on the current values (and store their outputs)."""
        from nnfuzz.materialize.check import check_inst, loss_of
        from nnfuzz.materialize.torch.lowering import lowering_for

        for inst in order:
            self.stats.checks += 1
            cls = type(inst.op)
            term, _, _ = check_inst(inst, lowering_for(cls), loss_of(cls), self.env, self.sur, gen.vars,
                                    False, self.cfg.int64_bits, "during value-aware generation")
            if term is not None:
                return False
        return True

    def _repair(self, gen, order) -> bool:
        """The value search, from the current values, within ``repair_passes``, on the part of the
        graph the checked instructions ``order`` depend on; then ``order`` and what depends on the
        placeholders the search moved are checked again (they may feed other ops; the rest keep their
        inputs, so their stored values and verdicts stand)."""
        import torch

        from nnfuzz.materialize.search import ValueSearch

        sub = partial_graph(gen, order)
        cfg = dataclasses.replace(self.cfg, max_passes=self.repair_passes, time_ms=max(self.cfg.time_ms, 1000.0),
                                  starts=1)
        res = ValueSearch(sub, cfg).run({}, {p: self.inputs[p] for p in sub.inputs}, self.seed + len(gen.insts),
                                   unsafe=True)
        if not res.ok:
            return False
        moved = {p for p, v in res.inputs.items() if not _same(self.inputs.get(p), v)}
        self.inputs.update(res.inputs)
        for p in moved:
            self.env[p] = _torch(self.inputs[p], gen.vars[p].dtype)
            self.sur.pop(p, None)
        with torch.no_grad():
            return self._check(gen, _downstream(gen, moved, order))

    def values_for(self, gen, gir) -> Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray]]:
        """(weights, inputs) of the finished ``gir`` (its vars renamed from the generator's)."""
        by_op = {id(i.op): i for i in gen.insts}
        rename = {}
        for inst in gir.insts:
            mine = by_op[id(inst.op)]
            rename.update(zip(inst.inputs, mine.inputs))
        return ({w: self.inputs[rename[w]] for w in gir.weights}, {i: self.inputs[rename[i]] for i in gir.inputs})


def generate_for_search(policy, ops, rows, cfg: Optional[SearchConfig], guide=None):
    """(GraphIR, start): with ``cfg.value_aware`` (and the search on) a graph grown with safe values and
    ``start=(weights, inputs)`` for ``build_model``; else the generator's graph and None. ``guide``: the
    coverage guidance's weights (generate/guide.py), or None."""
    if cfg is None or not cfg.enabled or not cfg.value_aware:
        from nnfuzz.generate.symbolic import GraphGenerator

        return GraphGenerator(policy, ops, rows, guide).generate(), None
    gir, weights, inputs, _ = generate_with_values(policy, ops, rows, cfg, guide=guide)
    return gir, (weights, inputs)


def generate_with_values(policy, ops=None, rows=None, cfg: Optional[SearchConfig] = None,
                         repair_passes: Optional[int] = None, guide=None):
    """(GraphIR, weights, inputs, TrackStats): a graph grown with safe values (module docstring);
    ``repair_passes`` defaults to ``cfg.repair_passes``."""
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.generate.symbolic import GraphGenerator
    from nnfuzz.materialize.search import warm_up
    from nnfuzz.materialize.torch.lowering import load_builtin_lowerings

    load_builtin_lowerings()  # one-off costs, not out of the generator's graph_timeout_s
    warm_up()
    gen = GraphGenerator(policy, ops if ops is not None else select_ops(policy), rows, guide)
    cfg = cfg or SearchConfig()
    gen.values = ValueTracker(cfg, policy.seed, cfg.repair_passes if repair_passes is None else repair_passes)
    gir = gen.generate()
    weights, inputs = gen.values.values_for(gen, gir)
    return gir, weights, inputs, gen.values.stats


def partial_graph(gen, only=None):
    """The generator's graph so far as a GraphIR: every placeholder an input, in topological order;
    with ``only`` (instructions), just them and what they depend on."""
    from nnfuzz.gir import GraphIR

    insts = topological_order(gen.insts, set(gen.placeholders))
    if only is not None:
        need = {v for i in only for v in i.outputs}
        keep = []
        for i in reversed(insts):
            if set(i.outputs) & need:
                keep.append(i)
                need.update(i.inputs)
        insts = keep[::-1]
        placeholders = [p for p in gen.placeholders if p in need]
    else:
        placeholders = list(gen.placeholders)
    consumed = {v for i in insts for v in i.inputs}
    names = set(placeholders) | {v for i in insts for v in i.outputs}
    return GraphIR(vars={v: t for v, t in gen.vars.items() if v in names}, inputs=placeholders,
                   weights=[], insts=insts, outputs=[v for i in insts for v in i.outputs if v not in consumed])


def _affected(gen, inst) -> List:
    """The instructions to check after ``inst`` was added: itself, and for a backward insertion (its
    output was a placeholder with consumers) everything downstream, in topological order."""
    out = set(inst.outputs)
    if not any(out & set(i.inputs) for i in gen.insts):
        return [inst]
    order = []
    for i in topological_order(gen.insts, set(gen.placeholders)):
        if i is inst or set(i.inputs) & out:
            order.append(i)
            out.update(i.outputs)
    return order


def _downstream(gen, moved: set, order: List) -> List:
    """``order``'s instructions and those reading, directly or not, a var in ``moved``, in topological order."""
    keep, changed = {id(i) for i in order}, set(moved)
    out = []
    for i in topological_order(gen.insts, set(gen.placeholders)):
        if id(i) in keep or changed.intersection(i.inputs):
            out.append(i)
            changed.update(i.outputs)
    return out


def _same(a, b) -> bool:
    """The same values, bit for bit (NaN included)."""
    return a is not None and a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _torch(v, dtype):
    from nnfuzz.materialize.values import to_torch

    return to_torch(v, dtype)
