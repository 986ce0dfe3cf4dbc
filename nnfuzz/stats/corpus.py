"""A model as the metrics see it: nodes (op type, input dtypes/shapes, attributes) and the edges between
them, read from a GraphIR or from an ONNX graph, so corpora from nnfuzz, migration and other tools compare.

In an ONNX graph, ``Constant`` nodes are data, not operations (nnfuzz's lowerings write constants either
as initializers or as Constant nodes, drawn): they are left out, like initializers and graph inputs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, List, Optional, Tuple

from nnfuzz.errors import NNFuzzError

DATA_OPS = {"Constant"}


class CorpusError(NNFuzzError):
    """A corpus folder that holds no readable model, or a model file that cannot be read."""


@dataclass(frozen=True)
class Node:
    op: str
    in_dtypes: Tuple[str, ...] = ()
    in_shapes: Tuple[Optional[Tuple[int, ...]], ...] = ()
    attrs: Tuple[Tuple[str, object], ...] = ()

    @property
    def degree(self) -> int:
        return len(self.in_dtypes)


@dataclass
class Graph:
    nodes: List[Node]
    edges: List[Tuple[int, int]] = field(default_factory=list)  # (producer, consumer) node indices
    source: str = ""
    level: str = "gir"  # "gir": nnfuzz op types | "onnx": ONNX op types


def _hashable(v):
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, bytes):
        return v.decode(errors="replace")
    if isinstance(v, float):
        return round(v, 6)
    if isinstance(v, (int, str, bool)) or v is None:
        return v
    return type(v).__name__  # tensors, graphs: their kind only


def _edges(producers: dict, consumed: Iterable[Tuple[int, List[str]]]) -> List[Tuple[int, int]]:
    """One edge per (producer node, consumer node, value) use."""
    return [(producers[v], j) for j, names in consumed for v in names if v in producers]


def from_gir(gir, source: str = "") -> Graph:
    nodes, producers, consumed = [], {}, []
    for j, inst in enumerate(gir.insts):
        ts = [gir.vars[v] for v in inst.inputs]
        attrs = tuple(sorted((k, _hashable(v)) for k, v in inst.op.attrs.items()))
        nodes.append(Node(inst.op.name, tuple(t.dtype.value for t in ts),
                          tuple(tuple(int(d) for d in t.shape) for t in ts), attrs))
        producers.update((v, j) for v in inst.outputs)
        consumed.append((j, list(inst.inputs)))
    return Graph(nodes, _edges(producers, consumed), source, "gir")


def from_onnx(model, source: str = "") -> Graph:
    import onnx
    from onnx import helper, shape_inference

    try:
        model = shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - a model shape inference rejects is still counted, without shapes
        pass
    g = model.graph
    types = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        tt = vi.type.tensor_type
        shape = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim) \
            if tt.HasField("shape") else None
        types[vi.name] = (onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type).name if tt.elem_type else "?", shape)
    for t in g.initializer:
        types[t.name] = (onnx.helper.tensor_dtype_to_np_dtype(t.data_type).name, tuple(t.dims))
    nodes, producers, consumed = [], {}, []
    for n in g.node:
        if n.op_type in DATA_OPS and not n.domain:
            continue
        ins = [x for x in n.input if x]
        attrs = tuple(sorted((a.name, _hashable(helper.get_attribute_value(a))) for a in n.attribute))
        j = len(nodes)
        nodes.append(Node(n.op_type if not n.domain else f"{n.domain}.{n.op_type}",
                          tuple(types.get(x, ("?", None))[0] for x in ins),
                          tuple(types.get(x, ("?", None))[1] for x in ins), attrs))
        producers.update((v, j) for v in n.output)
        consumed.append((j, ins))
    return Graph(nodes, _edges(producers, consumed), source, "onnx")


def model_folders(root: Path) -> List[Path]:
    """Folders under ``root`` (itself included) holding gir.json or model.onnx; a bug folder's
    ``original/`` (the graph before reduction) is not a separate model."""
    found = []
    for p in sorted([root, *root.rglob("*")]):
        if p.is_dir() and "original" not in p.relative_to(root).parts and \
                ((p / "gir.json").is_file() or (p / "model.onnx").is_file()):
            found.append(p)
    return found


def read_folder(path: Path, prefer: str = "auto") -> Graph:
    """``prefer``: auto (gir.json where present, else model.onnx) | gir | onnx."""
    gir_file, onnx_file = path / "gir.json", path / "model.onnx"
    use_gir = gir_file.is_file() and prefer in ("auto", "gir")
    try:
        if use_gir:
            from nnfuzz.gir import GraphIR

            return from_gir(GraphIR.loads(gir_file.read_text()), str(path))
        if onnx_file.is_file() and prefer in ("auto", "onnx"):
            import onnx

            return from_onnx(onnx.load(str(onnx_file)), str(path))
    except NNFuzzError:
        raise
    except Exception as e:  # noqa: BLE001 - re-raised with the file named
        raise CorpusError(f"{gir_file if use_gir else onnx_file}: cannot be read as a model: "
                          f"{type(e).__name__}: {e}") from e
    raise CorpusError(f"{path} has no {'gir.json' if prefer == 'gir' else 'model.onnx'} (stats reads from={prefer})")


def load_corpus(root: Path, prefer: str = "auto") -> Tuple[List[Graph], List[str]]:
    """The graphs under ``root`` and, for each folder that could not be read, a line saying why."""
    if not root.is_dir():
        raise CorpusError(f"{root} is not a folder; pass a folder of models (a bug store, `nnfuzz generate` output, ...)")
    graphs, skipped = [], []
    for p in model_folders(root):
        try:
            graphs.append(read_folder(p, prefer))
        except CorpusError as e:
            skipped.append(str(e))
    if not graphs:
        raise CorpusError(f"{root} holds no readable model (folders with gir.json or model.onnx)"
                          + (f"; {len(skipped)} unreadable, first: {skipped[0]}" if skipped else ""))
    return graphs, skipped
