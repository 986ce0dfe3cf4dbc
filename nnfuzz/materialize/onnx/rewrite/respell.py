"""Re-spell nodes: the model written again from its graph (materialize/onnx/direct.py) at the same
opset with other drawn spellings (axes positive or negative, constants as initializers or Constant
nodes, shape operands computed or constant, ...: the ONNX-native spellings of each op's lowering).
Spellings agree only where the values are in each op's domain (a max-shifted and a plain LogSumExp
of NaN differ), so a model whose values are undefined is not re-spelled."""
from __future__ import annotations

import dataclasses

from onnx import ModelProto

from nnfuzz.materialize.onnx.rewrite.graphs import NotApplicable
from nnfuzz.materialize.onnx.rewrite.registry import register


@register("respell", "the model written again from its graph with other drawn spellings")
def respell(model: ModelProto, rng, ctx) -> dict:
    from nnfuzz.errors import NNFuzzError
    from nnfuzz.materialize.onnx.direct import build_onnx

    spec = ctx.export
    if ctx.gir is None or spec is None or spec.via != "onnx":
        raise NotApplicable("the model was not written directly from a graph")
    if not ctx.defined:
        raise NotApplicable("the values are undefined (outside an op's domain), where spellings may differ")
    seed = int(rng.integers(1 << 31))
    at = dataclasses.replace(spec, seed=seed, spelling="random", opsets=(spec.opset, spec.opset))
    try:
        proto, _, drawn = build_onnx(ctx.gir, ctx.weights, at)
    except NNFuzzError as e:
        raise NotApplicable(f"no spelling at opset {spec.opset}: {e}") from None
    model.CopyFrom(proto)
    return {"spelling_seed": seed, "respelled": sum(1 for v in drawn.values() if v)}
