"""GraphIR -> ONNX model, written directly from each op's ONNX lowering (no torch).

Each instruction's spellings are drawn from an RNG seeded by the export seed and the instruction's
first output name, so a graph cut down by localization or reduction keeps the spellings of the nodes
it keeps. When a node cannot be written at the model's opset (``NotAtOpset``), the model is written
again at an opset drawn from those the node allows, within the spec's range.
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np
from onnx import helper, numpy_helper

from nnfuzz.errors import ExportError, NNFuzzError, OpDefinitionError
from nnfuzz.gir import GraphIR
from nnfuzz.materialize.onnx.builder import Draws, NotAtOpset, OnnxGraph, make_node
from nnfuzz.materialize.onnx.lowering import graph_onnx_lowerings
from nnfuzz.materialize.onnx.spec import ExportSpec

WEIGHT_SPELLINGS = ["initializer", "Constant", "input-with-initializer"]


class Unspellable(ExportError):
    """No opset in the allowed range can write some node of the graph (says which and why)."""


def build_onnx(gir: GraphIR, weights: Dict[str, np.ndarray], spec: ExportSpec):
    """(ModelProto, ExportSpec at the opset used, {var: {key: spelling}}) for ``gir`` with ``weights``."""
    lo, hi = spec.range
    opset = spec.opset
    tried = []
    while True:
        try:
            model, drawn = _write(gir, weights, spec.at(opset))
            return model, spec.at(opset), drawn
        except NotAtOpset as e:
            tried.append(f"opset {opset}: {e}")
            if e.needs is None or e.needs > hi or e.needs <= opset:
                raise Unspellable(f"no opset in {lo}..{hi} writes this graph: " + "; ".join(tried)) from None
            rng = np.random.default_rng([spec.seed, e.needs, 7])
            opset = int(rng.integers(e.needs, hi + 1)) if spec.spelling == "random" else e.needs


def _inst_rng(spec: ExportSpec, var: str):
    return None if spec.spelling == "canonical" else Draws(spec.seed, var)


def _write(gir: GraphIR, weights, spec: ExportSpec):
    g = OnnxGraph(spec.opset)
    g.avoid = frozenset(spec.avoid)
    for name, t in gir.vars.items():
        g.declare(name, t.dtype, t.shape)
    inputs = [g.value_info(x) for x in gir.inputs]
    for w in gir.weights:
        g.rng, g._where = _inst_rng(spec, w), w
        how = g.draw("weight", WEIGHT_SPELLINGS)
        tensor = numpy_helper.from_array(np.asarray(weights[w], dtype=gir.vars[w].dtype.numpy()), w)
        if how == "Constant":
            g.nodes.append(make_node("Constant", [], [w], f"Constant_{w}", value=tensor))
        else:
            g.initializers.append(tensor)
            if how == "input-with-initializer":
                inputs.append(g.value_info(w))
    for fn, inst in zip(graph_onnx_lowerings(gir), gir.insts):
        g.rng, g._where, g._op = _inst_rng(spec, inst.outputs[0]), inst.outputs[0], inst.op.name
        start = len(g.nodes)
        try:
            out = fn(inst.op, g, *inst.inputs)
        except (NotAtOpset, NNFuzzError):
            raise
        except Exception as e:
            ins = ", ".join(str(gir.vars[x]) for x in inst.inputs)
            raise OpDefinitionError(f"ONNX lowering of {inst.op!r} raised {type(e).__name__}: {e} "
                                    f"on inputs [{ins}] at opset {spec.opset}") from e
        g.bind(out, inst.outputs, start, inst.op)
    graph = helper.make_graph(g.nodes, "nnfuzz", inputs, [g.value_info(o) for o in gir.outputs],
                              initializer=g.initializers)
    opsets = [helper.make_opsetid("", spec.opset)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="nnfuzz",
                              ir_version=helper.find_min_ir_version_for(opsets))
    return model, g.spellings
