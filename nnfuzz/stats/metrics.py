"""Isra's eleven metrics and HirGen's coverage criteria over a corpus of graphs (docs/stats.md gives each
formula). Graph-level metrics are per-graph counts averaged over the corpus; operation-level metrics are
per-op-type values averaged over the op corpus C (``n_C`` types), so an op type never seen counts as 0."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Sequence

from nnfuzz.stats.corpus import Graph
from nnfuzz.stats.coverage import dtype_key, pairs, shape_bin


@dataclass
class OpCorpus:
    """The op types metrics are relative to, with each type's possible input degrees and the number of
    input-dtype rows it accepts (None where unknown: op x dtype is then a count, not a share)."""
    name: str
    degrees: Dict[str, FrozenSet[int]]
    dtype_rows: Dict[str, Optional[int]] = field(default_factory=dict)

    @property
    def ops(self) -> List[str]:
        return sorted(self.degrees)

    @staticmethod
    def nnfuzz(classes: Sequence[type], name: str = "nnfuzz ops") -> "OpCorpus":
        """Registered op classes: degrees from the class's ``arity`` choices (Concat's input count), else
        its fixed input count; dtype rows from ``in_dtypes``."""
        degrees = {c.name: frozenset(c.attr_choices.get("arity", ())) or frozenset({len(c.inp_ranks)}) for c in classes}
        return OpCorpus(name, degrees, {c.name: len(set(c.in_dtypes)) for c in classes})

    @staticmethod
    def observed(corpora: Sequence[Sequence[Graph]], name: str = "op types seen") -> "OpCorpus":
        """The op types seen in any of ``corpora`` (ONNX models from other tools); possible degrees are
        the ONNX schema's input counts (variadic ones capped at the largest seen), or those seen."""
        seen: Dict[str, set] = defaultdict(set)
        for graphs in corpora:
            for g in graphs:
                for n in g.nodes:
                    seen[n.op].add(n.degree)
        return OpCorpus(name, {op: frozenset(_schema_degrees(op, ds)) for op, ds in seen.items()})


def corpus_for(corpora: Sequence[Sequence[Graph]]) -> OpCorpus:
    """The op corpus metrics of ``corpora`` are relative to: nnfuzz's registered ops for graphs read from
    gir.json, the ONNX op types seen for graphs read from model.onnx; CorpusError if the two are mixed."""
    from nnfuzz.stats.corpus import CorpusError

    levels = {g.level for graphs in corpora for g in graphs}
    if len(levels) > 1:
        raise CorpusError("some models were read from gir.json (nnfuzz op types) and some from model.onnx "
                          "(ONNX op types), which do not compare; pass --from=onnx to read every corpus from model.onnx")
    if levels == {"onnx"}:
        return OpCorpus.observed(corpora, "ONNX op types seen in the corpora")
    from nnfuzz.generate import GenPolicy
    from nnfuzz.generate.opset import select_ops

    return OpCorpus.nnfuzz(select_ops(GenPolicy(), dialects=("tf",)), "nnfuzz's registered ops")


def _schema_degrees(op: str, seen: set) -> set:
    from onnx import defs

    domain, _, op_type = op.rpartition(".")
    try:
        s = defs.get_schema(op_type, domain)
    except defs.SchemaError:
        return set(seen)
    top = min(s.max_input, max(max(seen), s.min_input))
    return set(range(s.min_input, top + 1)) | set(seen)


def _out_degrees(g: Graph) -> List[int]:
    deg = [0] * len(g.nodes)
    for i, _ in g.edges:
        deg[i] += 1
    return deg


def _triples(g: Graph) -> set:
    succ = defaultdict(set)
    for i, j in g.edges:
        succ[i].add(j)
    return {(g.nodes[i].op, g.nodes[j].op, g.nodes[k].op) for i, js in succ.items() for j in js for k in succ.get(j, ())}


def _setting(n) -> tuple:
    return n.in_shapes, n.attrs


def graph_level(graphs: Sequence[Graph]) -> Dict[str, float]:
    n = len(graphs)
    sums = defaultdict(float)
    for g in graphs:
        sums["NOO"] += len(g.nodes)
        sums["NOT"] += len({x.op for x in g.nodes})
        sums["NOP"] += len(pairs(g))
        sums["NTR"] += len(_triples(g))
        sums["NSA"] += len({(x.op, *_setting(x)) for x in g.nodes})
    return {k: sums[k] / n for k in ("NOO", "NOT", "NOP", "NTR", "NSA")}


def compute(graphs: Sequence[Graph], corpus: OpCorpus) -> Dict[str, object]:
    """Every metric of ``graphs`` relative to ``corpus``: a flat dict (docs/stats.md)."""
    ops = set(corpus.ops)
    n_c = len(ops)
    degrees, out_degrees, settings = defaultdict(set), defaultdict(set), defaultdict(set)
    dtypes, rank_bins, edges, triples = set(), set(), set(), set()
    for g in graphs:
        outs = _out_degrees(g)
        for node, od in zip(g.nodes, outs):
            degrees[node.op].add(node.degree)
            out_degrees[node.op].add(od)
            settings[node.op].add(_setting(node))
            dtypes.add(dtype_key(node))
            rank_bins.add(shape_bin(node))
        edges |= pairs(g)
        triples |= _triples(g)
    seen = set(degrees)
    pairs_in = {p for p in edges if set(p) <= ops}
    triples_in = {t for t in triples if set(t) <= ops}
    out: Dict[str, object] = {"graphs": len(graphs), "op_corpus": corpus.name, "n_C": n_c}
    out.update(graph_level(graphs))
    out["OTC"] = len(ops & seen) / n_c
    out["IDC"] = sum(len(degrees.get(o, set()) & corpus.degrees[o]) / len(corpus.degrees[o]) for o in ops) / n_c
    out["ODC"] = sum(len(out_degrees.get(o, ())) for o in ops) / n_c
    out["SEC"] = len(pairs_in) / n_c ** 2
    out["DEC"] = len(triples_in) / n_c ** 3
    out["SAC"] = sum(len(settings.get(o, ())) for o in ops) / n_c
    out["op_types"] = len(ops & seen)
    rows = [corpus.dtype_rows.get(o) for o in ops]
    seen_dtypes = len({d for d in dtypes if d[0] in ops})
    out["op_x_dtype"] = seen_dtypes
    out["op_x_dtype_share"] = seen_dtypes / sum(rows) if rows and None not in rows else None
    out["op_x_rank_x_attr_bin"] = len({r for r in rank_bins if r[0] in ops})
    out["edges"] = len(pairs_in)
    out["triples"] = len(triples_in)
    out["outside_corpus"] = sorted(seen - ops)
    return out
