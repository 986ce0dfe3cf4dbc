"""The format a produced test is sent in, for a system that takes several (tvm: ``onnx`` and ``relax``)."""
from __future__ import annotations


def format_for(info, p) -> str:
    """The format drawn by ``p``'s seed (BackendInfo.format_for); ONNX where that draw is ``relax`` but an op
    lacks a Relax lowering or only the ONNX form is dynamic; ``relax`` where the draw is ``onnx``, ``relax``
    may be drawn and only the Relax form is dynamic (docs/dynamic-shapes.md)."""
    fmt = info.format_for(p.seed)
    forms = p.dynamic_forms
    if fmt == "relax" and forms.get("relax") != "dynamic" and (forms.get("onnx") == "dynamic" or not p.relax_lowerable()):
        return "onnx"
    if fmt == "onnx" and forms.get("relax") == "dynamic" and forms.get("onnx") != "dynamic" and "relax" in info.draw_formats:
        return "relax"
    return fmt
