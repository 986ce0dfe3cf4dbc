"""The coverage keys of one graph's nodes and edges (HirGen's criteria: operator x dtype, operator x
shape bin, operator edges). ``nnfuzz stats`` counts them (metrics.py) and coverage guidance aims at them
(generate/guide.py), so both use these functions and nothing else."""
from __future__ import annotations

import math

from nnfuzz.stats.corpus import Graph


def attr_bin(v):
    """A coarse bin of an attribute value: ints by sign and power of two, floats by sign and magnitude."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int):
        return "0" if v == 0 else ("-" if v < 0 else "+") + str(int(math.log2(abs(v))))
    if isinstance(v, float):
        return "0.0" if v == 0 else ("-" if v < 0 else "+") + f"e{int(math.floor(math.log10(abs(v))))}"
    if isinstance(v, tuple):
        return tuple(attr_bin(x) for x in v)
    return v


def edge_keys(g: Graph) -> list:
    """Each edge of ``g`` as (producer op, consumer op), once per edge (guidance counts them)."""
    return [(g.nodes[i].op, g.nodes[j].op) for i, j in g.edges]


def pairs(g: Graph) -> set:
    """The distinct (producer op, consumer op) edges of ``g`` (HirGen's edge coverage, Isra's NOP/SEC)."""
    return set(edge_keys(g))


def dtype_key(node) -> tuple:
    """A node's operator x dtype combination: (op, input dtypes)."""
    return node.op, node.in_dtypes


def shape_bin(node) -> tuple:
    """A node's operator x shape-bin combination: (op, input ranks, each attribute's ``attr_bin``)."""
    ranks = tuple(None if s is None else len(s) for s in node.in_shapes)
    return node.op, ranks, tuple((k, attr_bin(v)) for k, v in node.attrs)
