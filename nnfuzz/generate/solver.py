"""The Z3 fallback: one small problem per insertion that propagation and sampling did not settle (and
every insertion without binning): the new op's attributes and its new placeholders' dims.

Existing tensors are already concrete, so the problem never grows with the graph. Each generator
owns a fresh z3 Context, made on first use, so a graph that never needs Z3 makes none (a context
costs about 3 ms): z3's answers depend on the context's history, so a
shared context would make a graph depend on the graphs generated before it in the same process. Binning
preferences are passed as assumptions; those in an unsat core are dropped (a random half on a
timeout) and the check repeats, down to no preferences at all.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import List, Optional, Sequence

import z3


@dataclass
class SolverStats:
    checks: int = 0
    sat: int = 0
    unsat: int = 0
    unknown: int = 0
    seconds: float = 0.0


class LocalSolver:
    def __init__(self, timeout_ms: int, rng: random.Random):
        self.timeout_ms = int(timeout_ms)
        self.rng = rng
        self.stats = SolverStats()
        self._ctx = None
        self._solver = None

    @property
    def ctx(self) -> z3.Context:
        if self._ctx is None:
            self._ctx = z3.Context()
            self._solver = z3.Solver(ctx=self._ctx)
            self._solver.set("timeout", self.timeout_ms)
        return self._ctx

    def solve(self, constraints: Sequence, prefs: Sequence, variables: Sequence,
              fallback: Sequence = ()) -> Optional[List[int]]:
        """Values of ``variables`` satisfying ``constraints`` and as many ``prefs`` as fit, or None.

        Preferences in an unsat core are dropped (an empty core means the problem itself is unsat);
        on a timeout a random half is dropped. When every preference is gone, ``fallback`` (e.g.
        modest magnitudes) is tried as one last set before the bare constraints.
        """
        self.ctx  # noqa: B018  (creates the context and solver on first use)
        s = self._solver
        s.push()
        try:
            s.add(*constraints)
            prefs = list(prefs)
            while True:
                t0 = time.perf_counter()
                r = s.check(*prefs)
                self.stats.seconds += time.perf_counter() - t0
                self.stats.checks += 1
                if r == z3.sat:
                    self.stats.sat += 1
                    m = s.model()
                    return [m.eval(v, model_completion=True).as_long() for v in variables]
                if not prefs:
                    self.stats.unsat += r == z3.unsat
                    self.stats.unknown += r != z3.unsat
                    return None
                if r == z3.unsat:
                    self.stats.unsat += 1
                    core = {c.get_id() for c in s.unsat_core()}
                    if not core:
                        return None
                    prefs = [p for p in prefs if p.get_id() not in core]
                else:
                    self.stats.unknown += 1
                    self.rng.shuffle(prefs)
                    prefs = prefs[: len(prefs) // 2]
                if not prefs and fallback:
                    prefs, fallback = list(fallback), ()
        finally:
            s.pop()
