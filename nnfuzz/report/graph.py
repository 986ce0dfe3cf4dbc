"""A bug's graph drawn as inline SVG: a layered DAG layout of its nodes and edges (no graphviz).

The graph is read from gir.json as plain JSON (the op's name and attributes, not an op object: a folder
from someone else names whatever it likes, and drawing it must not depend on that op being registered)
or, for folders without one (migrated tests), from model.onnx's nodes. Layers are longest paths from
the inputs; within a layer nodes are ordered by the mean position of their producers (two sweeps), which
keeps edges of small graphs short and mostly uncrossed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from nnfuzz.errors import NNFuzzError
from nnfuzz.report.charts import esc

CHAR_W, NODE_H, GAP_X, GAP_Y, PAD = 6.6, 38, 24, 34, 12
MAX_LABEL = 44


class GraphDrawError(NNFuzzError):
    """gir.json or model.onnx does not describe a graph that can be drawn; the message says what is wrong."""


@dataclass
class Node:
    title: str
    detail: str = ""
    kind: str = "op"            # input | weight | op
    output: bool = False        # produces a graph output
    divergent: bool = False     # the first divergent node of an inconsistency
    preds: List[int] = field(default_factory=list)


def _tensor(t) -> str:
    if not isinstance(t, dict):
        return "?"
    shape = t.get("shape")
    dims = ",".join(str(d) for d in shape) if isinstance(shape, list) else "?"
    return f"{t.get('dtype', '?')}[{dims}]"


def _clip(text: str, n: int = MAX_LABEL) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def from_gir_json(data, divergent_var: Optional[str] = None) -> List[Node]:
    """Nodes of a gir.json object (GraphIR.to_json's layout); a reference to an undefined var becomes an
    input node marked ``?`` rather than an error, so a damaged graph is still shown as it is."""
    try:
        tvars = data["vars"]
        nodes: List[Node] = []
        producer: Dict[str, int] = {}
        for kind in ("inputs", "weights"):
            for v in data[kind]:
                producer[str(v)] = len(nodes)
                nodes.append(Node(str(v), _tensor(tvars.get(v)), kind.rstrip("s")))
        outputs = {str(v) for v in data.get("outputs", [])}
        for inst in data["insts"]:
            op = inst["op"]
            kwargs = op.get("kwargs") or {}
            attrs = ", ".join(f"{k}={v}" for k, v in kwargs.items()) if isinstance(kwargs, dict) else ""
            outs = [str(o) for o in inst["outputs"]]
            n = Node(f"{op.get('op', '?')}" + (f"({attrs})" if attrs else ""),
                     ", ".join(f"{o}: {_tensor(tvars.get(o))}" for o in outs),
                     output=any(o in outputs for o in outs), divergent=divergent_var in outs)
            for v in inst["inputs"]:
                if str(v) not in producer:
                    producer[str(v)] = len(nodes)
                    nodes.append(Node(f"{v} ?", "undefined var", "input"))
                n.preds.append(producer[str(v)])
            for o in outs:
                producer[o] = len(nodes)
            nodes.append(n)
    except (KeyError, TypeError, AttributeError) as e:
        raise GraphDrawError(f"gir.json is not a GraphIR object ({type(e).__name__}: {e})") from e
    return nodes


def from_onnx(model) -> List[Node]:
    """Nodes of an ONNX ModelProto: graph inputs, initializers (weights) and operator nodes."""
    g = model.graph
    nodes: List[Node] = []
    producer: Dict[str, int] = {}
    for vi in g.input:
        producer[vi.name] = len(nodes)
        nodes.append(Node(vi.name, "", "input"))
    for t in g.initializer:
        if t.name not in producer:
            producer[t.name] = len(nodes)
            nodes.append(Node(t.name, f"[{','.join(str(d) for d in t.dims)}]", "weight"))
    outputs = {o.name for o in g.output}
    for node in g.node:
        n = Node(node.op_type, ", ".join(node.output), output=any(o in outputs for o in node.output))
        n.preds = [producer[x] for x in node.input if x in producer]
        for o in node.output:
            producer[o] = len(nodes)
        nodes.append(n)
    return nodes


def _layers(nodes: List[Node]) -> List[List[int]]:
    depth = []
    for n in nodes:  # producers come first (from_* number them so), hence one pass
        depth.append(1 + max((depth[p] for p in n.preds if p < len(depth)), default=-1))
    layers: List[List[int]] = [[] for _ in range(max(depth, default=-1) + 1)]
    for i, d in enumerate(depth):
        layers[d].append(i)
    for _ in range(2):  # order by the mean position of the producers in the layer above
        pos = {i: k for layer in layers for k, i in enumerate(layer)}
        for layer in layers[1:]:
            layer.sort(key=lambda i: sum(pos[p] for p in nodes[i].preds) / len(nodes[i].preds)
                       if nodes[i].preds else pos[i])
            pos.update({i: k for k, i in enumerate(layer)})
    return layers


def draw(nodes: List[Node], ident: str) -> str:
    """The SVG of ``nodes``; ``ident`` makes its marker id unique in the page."""
    if not nodes:
        return '<p class="note">the graph has no nodes</p>'
    layers = _layers(nodes)
    width = {i: max(len(_clip(n.title)), len(_clip(n.detail))) * CHAR_W + 2 * PAD for i, n in enumerate(nodes)}
    rows = [sum(width[i] for i in layer) + GAP_X * (len(layer) - 1) for layer in layers]
    total_w = max(rows) + 2 * PAD
    xy: Dict[int, Tuple[float, float]] = {}
    for d, layer in enumerate(layers):
        x = (total_w - rows[d]) / 2
        for i in layer:
            xy[i] = (x, PAD + d * (NODE_H + GAP_Y))
            x += width[i] + GAP_X
    total_h = PAD * 2 + len(layers) * NODE_H + (len(layers) - 1) * GAP_Y
    marker = f"arrow-{esc(ident)}"
    parts = [f'<svg class="graph" viewBox="0 0 {total_w:.0f} {total_h:.0f}" width="{total_w:.0f}" '
             f'height="{total_h:.0f}" xmlns="http://www.w3.org/2000/svg" role="img">'
             f'<defs><marker id="{marker}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
             f'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>']
    for i, n in enumerate(nodes):
        x2, y2 = xy[i][0] + width[i] / 2, xy[i][1]
        for p in n.preds:
            x1, y1 = xy[p][0] + width[p] / 2, xy[p][1] + NODE_H
            mid = (y1 + y2) / 2
            parts.append(f'<path d="M{x1:.1f},{y1:.1f} C{x1:.1f},{mid:.1f} {x2:.1f},{mid:.1f} {x2:.1f},{y2:.1f}" '
                         f'class="edge" marker-end="url(#{marker})"/>')
    for i, n in enumerate(nodes):
        x, y = xy[i]
        cls = n.kind + (" out" if n.output else "") + (" divergent" if n.divergent else "")
        tip = f"{n.title}\n{n.detail}" + ("\nfirst divergent node" if n.divergent else "")
        parts.append(f'<g class="node {cls}"><title>{esc(tip)}</title>'
                     f'<rect x="{x:.1f}" y="{y:.1f}" width="{width[i]:.1f}" height="{NODE_H}" rx="6"/>'
                     f'<text x="{x + width[i] / 2:.1f}" y="{y + 15:.1f}" text-anchor="middle" class="t1">'
                     f'{esc(_clip(n.title))}</text>'
                     f'<text x="{x + width[i] / 2:.1f}" y="{y + 30:.1f}" text-anchor="middle" class="t2">'
                     f'{esc(_clip(n.detail))}</text></g>')
    parts.append("</svg>")
    return "".join(parts)
