"""Relax lowerings of the convolutions: ``relax.op.nn.conv{1,2,3}d`` and their transposes (NC[D]HW, OI[D]HW
weights as torch's; a transposed weight is IO[D]HW)."""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_lowers
from nnfuzz.ops.conv import spec as C

_CONV = {C.Conv1d: R.nn.conv1d, C.Conv2d: R.nn.conv2d, C.Conv3d: R.nn.conv3d}
_CONV_T = {C.ConvTranspose1d: (R.nn.conv1d_transpose, "IOW"), C.ConvTranspose2d: (R.nn.conv2d_transpose, "IOHW"),
           C.ConvTranspose3d: (R.nn.conv3d_transpose, "IODHW")}


@relax_lowers(*_CONV)
def _conv(op, g, x, w):
    return _CONV[type(op)](x, w, strides=op.stride, padding=op.padding, dilation=op.dilation, groups=op.groups)


@relax_lowers(*_CONV_T)
def _conv_transpose(op, g, x, w):
    fn, layout = _CONV_T[type(op)]
    kw = {"kernel_layout": layout} if layout != "IOHW" else {}
    return fn(x, w, strides=op.stride, padding=op.padding, output_padding=op.output_padding,
              dilation=op.dilation, groups=op.groups, **kw)
