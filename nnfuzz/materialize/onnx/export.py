"""A built model to ONNX, by either path behind one function (``to_onnx``): the direct lowering
(``direct.py``) or torch's exporter. The one place that knows which torch exporter is used: the
TorchScript one (``dynamo=False``), ~100x faster than the dynamo one; when torch removes it, only
``_export_bytes`` has to change.
"""
from __future__ import annotations

import dataclasses
import io
import warnings
from typing import List, Sequence

import onnx

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ExportError, OpDefinitionError
from nnfuzz.timeout import time_limit

DEFAULT_OPSET = 17
NO_TORCH_EXPORT: dict = {}  # op name -> why torch's exporter cannot write its torch lowering


def no_torch_export(op_class, reason: str) -> None:
    """Record (in the op family's torch.py) that torch's exporter cannot write ``op_class``: the op is then
    offered only to models written directly (``export.via=onnx``)."""
    NO_TORCH_EXPORT[op_class.name] = reason


def torch_exports(cls) -> bool:
    from nnfuzz.ops import load_aspect

    load_aspect("torch")
    return cls.name not in NO_TORCH_EXPORT


def to_onnx(gir, weights, module, torch_inputs, spec):
    """(ModelProto, the ExportSpec used, {var: {key: spelling}}) by ``spec.via``; ExportError on failure.
    A graph holding an op with a torch lowering but no ONNX lowering (a user's op written as the NNSmith
    docs show) is exported by torch at ``DEFAULT_OPSET`` instead, and the spec returned says so."""
    if spec.via == "onnx":
        from nnfuzz.materialize.onnx.direct import build_onnx
        from nnfuzz.materialize.onnx.lowering import has_onnx_lowering

        if all(has_onnx_lowering(type(i.op)) for i in gir.insts):
            with time_limit(spec.timeout_s, what="ONNX building"):
                return build_onnx(gir, weights, spec)
        spec = dataclasses.replace(spec, via="torch", opset=DEFAULT_OPSET, opsets=None, spelling="canonical")
    proto = export_onnx(module, torch_inputs, gir.inputs, gir.outputs, opset=spec.opset, timeout_s=spec.timeout_s)
    return proto, spec, {}


def _export_bytes(module, args: tuple, input_names, output_names, opset: int) -> bytes:
    import torch

    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice, once per model
        torch.onnx.export(
            module, args, buf, dynamo=False, opset_version=opset,
            input_names=list(input_names), output_names=list(output_names),
            do_constant_folding=False,
        )
    return buf.getvalue()


def export_onnx(module, args: Sequence, input_names: Sequence[str], output_names: Sequence[str],
                *, opset: int = DEFAULT_OPSET, timeout_s: float = 30.0) -> onnx.ModelProto:
    """Export and return the ONNX model; raise ExportError on failure or after ``timeout_s``."""
    try:
        with time_limit(timeout_s, what="ONNX export"):
            data = _export_bytes(module, tuple(args), input_names, output_names, opset)
    except ExportError:
        raise
    except Exception as e:
        raise ExportError(f"torch.onnx.export failed: {type(e).__name__}: {e}") from e
    return onnx.load_model_from_string(data)


def check_onnx(model: onnx.ModelProto, expected: List[AbsTensor], output_names: Sequence[str], *,
               where: str = "model") -> onnx.ModelProto:
    """Run the ONNX checker and strict, type-checking shape inference (what ``full_check=True`` adds
    to the checker, run here once instead of twice, on one serialization of the model), and make the
    inferred outputs agree with ``expected``.

    Returns the shape-inferred model. Raises OpDefinitionError naming the output that disagrees.
    """
    try:
        data = model.SerializeToString()
        onnx.checker.check_model(data)
        inferred = onnx.shape_inference.infer_shapes(data, check_type=True, strict_mode=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        raise OpDefinitionError(f"{where}: the ONNX checker rejects the model: {e}") from e
    outs = {o.name: o for o in inferred.graph.output}
    for name, want in zip(output_names, expected):
        if name not in outs:
            raise OpDefinitionError(f"{where}: output {name!r} missing from the exported ONNX graph")
        tt = outs[name].type.tensor_type
        got_dtype = DType.parse(tt.elem_type)
        if got_dtype != want.dtype:
            raise OpDefinitionError(
                f"{where}: output {name} has ONNX dtype {got_dtype} but type_transfer says {want.dtype}"
            )
        if tt.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
            if len(dims) != want.ndims or any(d is not None and d != w for d, w in zip(dims, want.shape)):
                raise OpDefinitionError(
                    f"{where}: output {name} has ONNX-inferred shape {dims} but type_transfer says {want.shape}"
                )
    return inferred
