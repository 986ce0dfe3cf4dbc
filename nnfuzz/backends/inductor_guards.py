"""Recompilations that no guard should ask for (docs/dynamic-shapes.md, "Recompilations").

A dynamic model's symbolic dims are marked unbacked (backends/inductor.py ``mark_dynamic``), but those
that broadcasting stretches from 1, which stay backed. dynamo guards only on backed sizes (an unbacked
size has no value to guard on: what the graph assumes of it is a runtime assert, which raises instead).
So once the compiled graph has served a call, a later call whose inputs differ from it only in unbacked
sizes passes every guard of that graph, which dynamo keeps and tries, and must not recompile. A
recompilation there is dynamo failing a guard no graph holds: a fault of torch.compile's own (the
issue's "recompiling where no guard should fail"). Only the calls before the first recompilation are
known to be that graph's: a recompilation compiles for the new, unmarked inputs, where those sizes are
backed (and a 1 is specialized), so a later call served by either graph says nothing of which guards
it passed. A recompilation where some backed size changed may be legitimate (0/1 specialization, a
relation between sizes) and is only counted.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set


def symbol_sizes(gir, shapes: Sequence[Sequence[int]]) -> Dict[str, int]:
    """Each of the family's symbols -> its size in ``shapes`` (the inputs' shapes, in ``gir.inputs`` order)."""
    sizes = {}
    for name, shape in zip(gir.inputs, shapes):
        for axis, sym in enumerate(gir.family.dims.get(name) or ()):
            if sym is not None:
                sizes[sym] = int(shape[axis])
    return sizes


class Recompiles:
    """A compiled dynamic model's calls: the sizes the compiled graph served (the calls before the first
    recompilation), and the first recompilation that only unbacked sizes asked for (``fault``: {"shape": the family's shape k it was at, "why": one line},
    None while there is none). The compile's own call is at shape 0; the runs follow, shape 0, 1, ...
    (fuzz/worker.py run_backend_shapes)."""

    def __init__(self, gir, unbacked: Set[str], first: Sequence[Sequence[int]]):
        self.gir, self.unbacked = gir, set(unbacked)
        self.served: List[Dict[str, int]] = [symbol_sizes(gir, first)]  # the compile's own call first
        self.calls, self.recompiled = 1, False
        self.fault: Optional[dict] = None

    def called(self, shapes: Sequence[Sequence[int]], recompiled: bool) -> None:
        """A call at ``shapes`` ended; ``recompiled``: dynamo compiled a new graph for it."""
        sizes = symbol_sizes(self.gir, shapes)
        k, self.calls = self.calls - 1, self.calls + 1  # (the family's shape this call ran)
        if self.recompiled:
            return
        if recompiled and self.fault is None:
            for old in self.served:
                if all(old[s] == sizes[s] for s in sizes if s not in self.unbacked):
                    changed = ", ".join(s for s in sorted(sizes) if old[s] != sizes[s]) or "none"
                    self.fault = {"shape": k,
                                  "why": f"recompiled for sizes {_show(sizes)}, which differ from sizes {_show(old)}, "
                                         f"already served, only in unbacked {changed}: no guard holds them"}
                    break
        self.recompiled = recompiled
        if not recompiled:
            self.served.append(sizes)


def _show(sizes: Dict[str, int]) -> str:
    return "{" + ", ".join(f"{s}={n}" for s, n in sorted(sizes.items())) + "}"
