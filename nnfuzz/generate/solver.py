"""One small Z3 problem per insertion: the new op's attributes and its new placeholders' dims.

Existing tensors are already concrete, so the problem never grows with the graph. Binning
preferences are passed as assumptions; when they make the problem unsat (or time out), a random
half is dropped and the check repeats, down to no preferences at all.
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
        self.solver = z3.Solver()
        self.solver.set("timeout", int(timeout_ms))
        self.rng = rng
        self.stats = SolverStats()

    def solve(self, constraints: Sequence, prefs: Sequence, variables: Sequence) -> Optional[List[int]]:
        """Values of ``variables`` satisfying ``constraints`` (and as many ``prefs`` as fit), or None."""
        s = self.solver
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
                if r == z3.unsat:
                    self.stats.unsat += 1
                else:
                    self.stats.unknown += 1
                if not prefs:
                    return None
                self.rng.shuffle(prefs)
                prefs = prefs[: len(prefs) // 2]
        finally:
            s.pop()
