"""The ``relax`` dynamic form (docs/dynamic-shapes.md): whether a dynamic graph builds as a Relax-native
module with symbolic shape vars (materialize/relax/symbolic.py) for the layout its seed draws."""
from __future__ import annotations

from nnfuzz.gir import GraphIR


def relax_form(gir: GraphIR, seed: int) -> str:
    """"dynamic" when the dynamic graph ``gir`` builds as a Relax module with symbolic input dims (layout
    from ``seed``) whose shapes agree with the graph's at every shape, else why not."""
    from nnfuzz.materialize.relax.lowering import relax_lowerable

    if not relax_lowerable(gir.op_names()):
        return "an op of the graph has no Relax lowering"
    from nnfuzz.materialize.relax.build import build_relax

    try:
        build_relax(gir, seed)
    except Exception as e:  # noqa: BLE001 - a lowering that asks a symbolic dim: the form is static, said so
        return f"the Relax module with symbolic dims does not build: {type(e).__name__}: {str(e)[:200]}"
    return "dynamic"
