"""A bug's graph drawn as inline SVG: a layered DAG layout of its nodes and edges (no graphviz).

The graph is read from gir.json as plain JSON (the op's name and attributes, not an op object: a folder
from someone else names whatever it likes, and drawing it must not depend on that op being registered)
or, for folders without one (migrated tests), from model.onnx's nodes. Layers are longest paths from
the inputs; an edge that skips layers gets a place of its own in each layer it passes; within a layer, nodes are
ordered by the mean position of their producers (two sweeps), which keeps edges of small graphs short
and mostly uncrossed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from nnfuzz.errors import NNFuzzError
from nnfuzz.report.charts import esc

CHAR_W, NODE_H, GAP_X, GAP_Y, PAD = 6.6, 38, 24, 34, 12
DUMMY_W = 8  # the width an edge takes in a layer it passes through
MAX_LABEL = 44


class GraphDrawError(NNFuzzError):
    """gir.json or model.onnx does not describe a graph that can be drawn; the message says what is wrong."""


@dataclass
class Node:
    title: str
    detail: str = ""
    kind: str = "op"            # input | weight | op
    output: bool = False        # produces a graph output
    divergent: bool = False     # the blamed node: the root cause, the first divergent node, the one the error names
    extra: str = ""             # a third line: the ONNX node the system was given for it (the blamed node)
    preds: List[int] = field(default_factory=list)


def _tensor(t) -> str:
    if not isinstance(t, dict):
        return "?"
    shape = t.get("shape")
    dims = ",".join(str(d) for d in shape) if isinstance(shape, list) else "?"
    return f"{t.get('dtype', '?')}[{dims}]"


def _clip(text: str, n: int = MAX_LABEL) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def from_gir_json(data, divergent_var: Optional[str] = None, extra: str = "") -> List[Node]:
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
                     output=any(o in outputs for o in outs), divergent=divergent_var in outs,
                     extra=extra if divergent_var in outs else "")
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


def _layout(nodes: List[Node]):
    """Layers of slots and the edges as chains. A slot is a node's index or, for an edge that skips
    layers, a dummy (an int from ``len(nodes)`` on) in each layer it passes, so that it gets a place of
    its own instead of crossing the nodes there. Returns (layers, preds of every slot, [(producer,
    consumer, [dummies])])."""
    depth: List[int] = []
    for n in nodes:  # producers come first (from_* number them so), hence one pass
        depth.append(1 + max((depth[p] for p in n.preds), default=-1))
    layers: List[List[int]] = [[] for _ in range(max(depth) + 1)]
    for i, d in enumerate(depth):
        layers[d].append(i)
    preds: Dict[int, List[int]] = {}
    chains = []
    dummy = len(nodes)
    for i, n in enumerate(nodes):
        ends = []
        for p in n.preds:
            prev, chain = p, []
            for d in range(depth[p] + 1, depth[i]):
                preds[dummy] = [prev]
                layers[d].append(dummy)
                chain.append(dummy)
                prev, dummy = dummy, dummy + 1
            ends.append(prev)
            chains.append((p, i, chain))
        preds[i] = ends
    for _ in range(2):  # order by the mean position of the producers in the layer above
        pos = {s: k for layer in layers for k, s in enumerate(layer)}
        for layer in layers[1:]:
            layer.sort(key=lambda s: sum(pos[p] for p in preds.get(s, ())) / len(preds[s]) if preds.get(s) else pos[s])
            pos.update({s: k for k, s in enumerate(layer)})
    return layers, preds, chains


def draw(nodes: List[Node], ident: str) -> str:
    """The SVG of ``nodes``; ``ident`` makes its marker id unique in the page."""
    if not nodes:
        return '<p class="note">the graph has no nodes</p>'
    layers, _, chains = _layout(nodes)
    nh = NODE_H + (14 if any(n.extra for n in nodes) else 0)  # room for a third line
    width = {s: (max(len(_clip(nodes[s].title)), len(_clip(nodes[s].detail)), len(_clip(nodes[s].extra))) * CHAR_W + 2 * PAD
                 if s < len(nodes) else DUMMY_W) for layer in layers for s in layer}
    rows = [sum(width[s] for s in layer) + GAP_X * (len(layer) - 1) for layer in layers]
    total_w = max(rows) + 2 * PAD
    xy: Dict[int, Tuple[float, float]] = {}
    for d, layer in enumerate(layers):
        x = (total_w - rows[d]) / 2
        for s in layer:
            xy[s] = (x, PAD + d * (nh + GAP_Y))
            x += width[s] + GAP_X
    total_h = PAD * 2 + len(layers) * nh + (len(layers) - 1) * GAP_Y
    marker = f"arrow-{esc(ident)}"
    parts = [f'<svg class="graph" viewBox="0 0 {total_w:.0f} {total_h:.0f}" width="{total_w:.0f}" '
             f'height="{total_h:.0f}" xmlns="http://www.w3.org/2000/svg" role="img">'
             f'<defs><marker id="{marker}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
             f'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>']
    for p, i, chain in chains:
        x, y = xy[p][0] + width[p] / 2, xy[p][1] + nh
        d = f"M{x:.1f},{y:.1f}"
        for s in chain + [i]:
            x2, y2 = xy[s][0] + width[s] / 2, xy[s][1]
            mid = (y + y2) / 2
            d += f" C{x:.1f},{mid:.1f} {x2:.1f},{mid:.1f} {x2:.1f},{y2:.1f}"
            if s != i:  # through the dummy's layer
                d += f" L{x2:.1f},{y2 + nh:.1f}"
            x, y = x2, y2 + nh
        parts.append(f'<path d="{d}" class="edge" marker-end="url(#{marker})"/>')
    for i, n in enumerate(nodes):
        x, y = xy[i]
        cls = n.kind + (" out" if n.output else "") + (" divergent" if n.divergent else "")
        tip = f"{n.title}\n{n.detail}" + (f"\n{n.extra}" if n.extra else "") + ("\nthe blamed node" if n.divergent else "")
        parts.append(f'<g class="node {cls}"><title>{esc(tip)}</title>'
                     f'<rect x="{x:.1f}" y="{y:.1f}" width="{width[i]:.1f}" height="{nh}" rx="6"/>'
                     f'<text x="{x + width[i] / 2:.1f}" y="{y + 15:.1f}" text-anchor="middle" class="t1">'
                     f'{esc(_clip(n.title))}</text>'
                     f'<text x="{x + width[i] / 2:.1f}" y="{y + 30:.1f}" text-anchor="middle" class="t2">'
                     f'{esc(_clip(n.detail))}</text>'
                     + (f'<text x="{x + width[i] / 2:.1f}" y="{y + 44:.1f}" text-anchor="middle" class="t3">'
                        f'{esc(_clip(n.extra))}</text>' if n.extra else "") + '</g>')
    parts.append("</svg>")
    return "".join(parts)
