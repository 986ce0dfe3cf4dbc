from typing import List, Optional

import torch
import torch.nn.functional as F

from nnfuzz.ops.pad import spec as P
from nnfuzz.materialize.torch.lowering import lowers


@lowers(P.ConstantPad)
def _constant_pad(op, x):
    return F.pad(x, op.pads, mode="constant", value=op.value)


@lowers(P.ReflectPad)
def _reflect_pad(op, x):
    return F.pad(x, op.pads, mode="reflect")


@lowers(P.ReplicatePad)
def _replicate_pad(op, x):
    return F.pad(x, op.pads, mode="replicate")


@lowers(P.CircularPad)
def _circular_pad(op, x):
    return F.pad(x, op.pads, mode="circular")  # exported as Slice/Concat (ONNX "wrap" needs opset 19)


# ---- static ONNX export of F.pad --------------------------------------------------------------
# The TorchScript exporter's own aten::pad symbolic computes the ONNX pads at run time (Shape,
# ConstantOfShape, Concat, Transpose, ...). ONNX shape inference then loses every dim of the
# output, and worse, the exporter itself loses them: a later torch.squeeze(x, d) on such a tensor
# is exported as an If node (squeeze only when dim d happens to be 1), whose rank ONNX cannot infer.
# Our pads are constants, so this symbolic emits them as one Constant in ONNX order (all begins,
# then all ends, first axis first). Pads that are not constants in the traced graph (a user's
# lowering computing them at run time: no nnfuzz op does) and modes without an ONNX Pad mode
# (circular) go to the stock symbolic: a decision made on the graph's structure, not on an error.

_ONNX_PAD_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}


def _constant_pads(pad) -> Optional[List[int]]:
    """The pads as ints when the traced graph holds them as constants (None: computed at run time)."""
    from torch.onnx import symbolic_helper

    node = pad.node()
    if node.kind() == "prim::ListConstruct":
        elements = [v.node() for v in node.inputs()]
    elif node.kind() == "onnx::Constant":
        elements = [node]
    else:
        return None
    if any(e.kind() != "onnx::Constant" for e in elements):
        return None
    return symbolic_helper._parse_arg(pad, "is")


def _static_pad_symbolic(g, x, pad, mode, value):
    from torch.onnx import symbolic_helper, symbolic_opset11

    mode_s = symbolic_helper._parse_arg(mode, "s")
    rank = symbolic_helper._get_tensor_rank(x)
    pads = _constant_pads(pad) if mode_s in _ONNX_PAD_MODE and rank is not None else None
    if pads is None:
        return symbolic_opset11.pad(g, x, pad, mode, value)
    begins, ends = [0] * rank, [0] * rank
    for k in range(len(pads) // 2):  # torch order: last axis first, (begin, end) pairs
        begins[rank - 1 - k], ends[rank - 1 - k] = pads[2 * k], pads[2 * k + 1]
    onnx_pads = g.op("Constant", value_t=torch.tensor(begins + ends, dtype=torch.int64))
    if mode_s == "constant":
        fill = symbolic_helper._if_scalar_type_as(symbolic_helper._maybe_get_scalar(value), x)
        return g.op("Pad", x, onnx_pads, fill, mode_s="constant")
    return g.op("Pad", x, onnx_pads, mode_s=_ONNX_PAD_MODE[mode_s])


def _register_static_pad_export() -> Optional[str]:
    """Replace the exporter's aten::pad symbolic (opset 11 and later); returns why it could not be
    (None: replaced)."""
    register = getattr(torch.onnx, "register_custom_op_symbolic", None)
    if register is None:
        return (f"torch {torch.__version__} has no TorchScript ONNX exporter to patch "
                "(nnfuzz/materialize/onnx/export.py must move to another exporter)")
    register("aten::pad", _static_pad_symbolic, 11)
    return None


# why F.pad exports through the stock symbolic (None: through _static_pad_symbolic)
STATIC_PAD_EXPORT_MISSING = _register_static_pad_export()
