"""The registry of ONNX lowerings, one function per abstract op class.

An ONNX lowering is ``fn(op, g, *input_names) -> name | [names]`` for a *concrete* op: it writes
nodes into ``g`` (an ``OnnxGraph``, see ``builder.py``) at ``g.opset`` and returns the names holding
its outputs. Register it with ``@onnx_lowers(OpClass, ...)``; lookup walks the class's MRO like the
torch lowerings. It must compute exactly what the op's torch lowering computes (the reference); where
no single node does, it composes nodes and its docstring says so. An op class without an ONNX lowering
is not offered to models built with ``export.via=onnx``.
"""
from __future__ import annotations

from typing import Callable, Optional

from nnfuzz.abstract.optable import OpTable
from nnfuzz.ops import load_aspect

ONNX_LOWERINGS = OpTable("ONNX lowering")
onnx_lowers = ONNX_LOWERINGS.register


def onnx_each(table: dict) -> None:
    """Register ``{OpClass: "OnnxOpType"}`` for ops that are one attribute-free ONNX node."""
    for cls, op_type in table.items():
        ONNX_LOWERINGS[cls] = (lambda t: (lambda op, g, *xs: g.op(t, *xs)))(op_type)


def onnx_lowering_for(cls) -> Optional[Callable]:
    load_aspect("onnx")
    return ONNX_LOWERINGS.lookup(cls)


def has_onnx_lowering(cls) -> bool:
    return onnx_lowering_for(cls) is not None


def graph_onnx_lowerings(gir) -> list:
    load_aspect("onnx")
    return ONNX_LOWERINGS.for_graph(gir, "ONNX lowering", "onnx_lowers")
