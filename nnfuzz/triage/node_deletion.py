"""Node deletion, the first step of `nnfuzz reduce` (driven by triage/bug_reduction.py): shrink a bug's
graph while its dedup signature holds.

One move, repeated to a fixed point: delete a node. Its consumers read what it produced as a new
graph input, fed with the exact value the original run gave it (so they compute what they computed
before), placeholders nothing reads any more disappear, and the graph's outputs are again the values
nothing consumes. A candidate counts only if the system under test shows the *same signature*
(crash: same stage, exception and normalized message; inconsistency: same op and dtype at the first
divergent node). Nodes are tried from the outputs backwards, so whole output chains go first.

Shapes and attributes are shrunk afterwards by re-solving the constraints (triage/shrink.py).
"""
from __future__ import annotations

import dataclasses
import time
from typing import Callable, Dict, Optional, Tuple

import numpy as np

from nnfuzz.gir import GraphIR, Inst


@dataclasses.dataclass
class Candidate:
    gir: GraphIR
    weights: Dict[str, np.ndarray]
    inputs: Dict[str, np.ndarray]


def delete_node(c: Candidate, k: int, values: Dict[str, np.ndarray]) -> Candidate:
    """``c`` without instruction ``k``; consumers of its outputs read them as new inputs. A quantized-tensor
    value (DType.quant_only) is never an input or output: with a QuantizeLinear go the DequantizeLinears
    reading it, and with the last of them the QuantizeLinear (``with_pairs``)."""
    g = c.gir
    ks = with_pairs(g, k)
    insts = [inst for j, inst in enumerate(g.insts) if j not in ks]
    used = {v for i in insts for v in i.inputs}
    new_inputs = [v for j in sorted(ks) for v in g.insts[j].outputs if v in used]
    keep = [v for v in g.inputs if v in used] + new_inputs
    weights = [w for w in g.weights if w in used]
    defined = set(keep) | set(weights) | {v for i in insts for v in i.outputs}
    names = set(defined)
    gir = GraphIR(vars={v: t for v, t in g.vars.items() if v in names}, inputs=keep, weights=weights,
                  insts=[Inst(i.op, list(i.inputs), list(i.outputs)) for i in insts],
                  outputs=[v for i in insts for v in i.outputs if v not in used])
    inputs = {v: c.inputs[v] for v in keep if v in c.inputs}
    inputs.update({v: values[v] for v in new_inputs})
    return Candidate(gir.check(), {w: c.weights[w] for w in weights}, inputs)


def with_pairs(g: GraphIR, k: int) -> set:
    """Instruction ``k`` and those that go with it: the readers of its quantized-tensor outputs, the producer
    of a quantized-tensor input that nothing left reads."""
    ks, grown = {k}, True
    while grown:
        before = set(ks)
        for j in list(ks):
            for v in g.insts[j].outputs:
                if g.vars[v].dtype.quant_only:
                    ks |= {r for r, i in enumerate(g.insts) if v in i.inputs}
            for v in g.insts[j].inputs:
                if g.vars[v].dtype.quant_only and all(r in ks for r, i in enumerate(g.insts) if v in i.inputs):
                    ks |= {p for p, i in enumerate(g.insts) if v in i.outputs}
        grown = ks != before
    return ks


def all_values(c: Candidate) -> Dict[str, np.ndarray]:
    """Every value of ``c``'s graph on its inputs (torch eager), the inputs included."""
    from nnfuzz.materialize.model import build_model

    full = dataclasses.replace(c.gir, outputs=[v for i in c.gir.insts for v in i.outputs
                                               if not c.gir.vars[v].dtype.quant_only])  # (never an output)
    model = build_model(full, 0, export=False, values=(c.weights, c.inputs))
    return {**c.inputs, **dict(zip(full.outputs, _torch_outputs(model)))}


def reduce_graph(start, holds: Callable[[object], bool], budget_s: float = 120.0,
                 delete: Optional[Callable[[object, int], Optional[object]]] = None) -> Tuple[object, int]:
    """Delete nodes while ``holds(candidate)``; returns the smallest candidate and the trials made.
    ``delete(candidate, k)``: the candidate without node k (None: that node cannot go); by default
    ``delete_node`` with the starting graph's values."""
    if delete is None:
        # every value of the starting graph, once: deleting a node changes no remaining value (its
        # consumers are fed exactly what it produced), so these serve every later candidate too
        values = all_values(start)
        delete = lambda c, k: delete_node(c, k, values)  # noqa: E731

    deadline = time.monotonic() + budget_s
    best, trials = start, 0
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        for k in reversed(range(len(best.gir.insts))):
            if len(best.gir.insts) <= 1 or time.monotonic() >= deadline:
                break
            if k >= len(best.gir.insts):  # a deletion took a quantized pair along: fewer nodes than k
                continue
            cand = delete(best, k)
            if cand is None or not cand.gir.insts:
                continue
            trials += 1
            if holds(cand):
                best, changed = cand, True
    return best, trials


def _torch_outputs(model):
    import torch

    from nnfuzz.materialize.values import to_numpy

    with torch.no_grad():
        return [to_numpy(t) for t in model.module(*model.torch_inputs)]
