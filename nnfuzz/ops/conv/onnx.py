"""ONNX lowerings of the convolutions: Conv and ConvTranspose, no bias (the torch lowerings pass None).

Drawn spellings: the bias input omitted or given as zeros; ``kernel_shape`` given or inferred from
the weight; ``strides``/``dilations``/``group``/``output_padding`` at their defaults given or
omitted; Conv's symmetric padding as ``pads`` or an ``auto_pad`` that pads the same (see
``ops/pool/onnx.py``); an unpadded ConvTranspose as no ``pads``, zero ``pads``, ``auto_pad=VALID``
or the ``output_shape`` it yields.

ConvTranspose's ``output_shape`` is not drawn for a padded op, although the spec derives the same
pads from it (total 2 * pad, split evenly): onnx's ReferenceEvaluator ignores it (it crops at the
end instead) and onnx's shape inference gives up on an ``output_shape`` below the input size.
"""
import numpy as np

from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.conv import spec as C
from nnfuzz.ops.pool.onnx import default_ints, pad_attrs


def _common(op, g, x, w) -> dict:
    """Attributes Conv and ConvTranspose share, and the optional zero bias (drawn)."""
    attrs = {**default_ints(g, "strides", op.stride, 1), **default_ints(g, "dilations", op.dilation, 1)}
    if int(op.groups) != 1 or g.flip("group", "given", "omitted"):
        attrs["group"] = int(op.groups)
    if g.flip("kernel_shape", "given", "inferred"):
        attrs["kernel_shape"] = list(g.shape(w)[2:])
    return attrs


def _zero_bias(g, x, channels: int):
    if g.flip("bias", "zeros", "omitted"):
        return g.const(np.zeros([channels]), g.dtype(x), "bias")
    return None


@onnx_lowers(C.Conv1d, C.Conv2d, C.Conv3d)
def _conv(op, g, x, w):
    attrs = _common(op, g, x, w)
    attrs.update(pad_attrs(g, g.shape(x)[2:], g.shape(w)[2:], op.stride, op.dilation, op.padding))
    return g.op("Conv", x, w, _zero_bias(g, x, g.shape(w)[0]), **attrs)


@onnx_lowers(C.ConvTranspose1d, C.ConvTranspose2d, C.ConvTranspose3d)
def _conv_transpose(op, g, x, w):
    attrs = _common(op, g, x, w)
    padding = [int(p) for p in op.padding]
    out_pad = [int(p) for p in op.output_padding]
    how = g.draw("padding", ["pads"] + ([] if any(padding) else ["VALID", "output_shape"]))
    if how == "output_shape":
        attrs["output_shape"] = [(s - 1) * st + d * (k - 1) + o + 1 for s, k, st, o, d in
                                 zip(g.shape(x)[2:], g.shape(w)[2:], op.stride, out_pad, op.dilation)]
    elif how == "VALID":
        attrs["auto_pad"] = "VALID"
    elif any(padding) or g.flip("pads", "zeros", "omitted"):
        attrs["pads"] = padding * 2
    attrs.update(default_ints(g, "output_padding", out_pad, 0))
    channels = g.shape(w)[1] * int(op.groups)
    return g.op("ConvTranspose", x, w, _zero_bias(g, x, channels), **attrs)
