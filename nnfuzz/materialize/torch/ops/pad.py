import torch
import torch.nn.functional as F

from nnfuzz.abstract.ops import pad as P
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
# Our pads are constants, so this symbolic emits them as one Constant in ONNX order
# (all begins, then all ends, first axis first) and falls back to the stock one otherwise.

_ONNX_PAD_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}


def _static_pad_symbolic(g, x, pad, mode, value):
    from torch.onnx import symbolic_helper, symbolic_opset11

    mode_s = symbolic_helper._parse_arg(mode, "s")
    rank = symbolic_helper._get_tensor_rank(x)
    try:
        pads = symbolic_helper._parse_arg(pad, "is")
    except Exception:  # pads computed at run time: not from this package
        pads = None
    if mode_s not in _ONNX_PAD_MODE or rank is None or pads is None:
        return symbolic_opset11.pad(g, x, pad, mode, value)
    begins, ends = [0] * rank, [0] * rank
    for k in range(len(pads) // 2):  # torch order: last axis first, (begin, end) pairs
        begins[rank - 1 - k], ends[rank - 1 - k] = pads[2 * k], pads[2 * k + 1]
    onnx_pads = g.op("Constant", value_t=torch.tensor(begins + ends, dtype=torch.int64))
    if mode_s == "constant":
        fill = symbolic_helper._if_scalar_type_as(symbolic_helper._maybe_get_scalar(value), x)
        return g.op("Pad", x, onnx_pads, fill, mode_s="constant")
    return g.op("Pad", x, onnx_pads, mode_s=_ONNX_PAD_MODE[mode_s])


def _register_static_pad_export() -> None:
    try:
        from torch.onnx import register_custom_op_symbolic, symbolic_helper, symbolic_opset11  # noqa: F401
    except ImportError:  # no TorchScript exporter: nothing to patch
        return
    register_custom_op_symbolic("aten::pad", _static_pad_symbolic, 11)  # opset 11 and later


_register_static_pad_export()
