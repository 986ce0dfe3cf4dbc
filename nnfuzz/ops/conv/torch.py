import torch.nn.functional as F

from nnfuzz.ops.conv import spec as C
from nnfuzz.materialize.torch.lowering import lowers

_CONV = {C.Conv1d: F.conv1d, C.Conv2d: F.conv2d, C.Conv3d: F.conv3d}
_CONV_T = {C.ConvTranspose1d: F.conv_transpose1d, C.ConvTranspose2d: F.conv_transpose2d,
           C.ConvTranspose3d: F.conv_transpose3d}


@lowers(*_CONV)
def _conv(op, x, w):
    return _CONV[type(op)](x, w, None, stride=op.stride, padding=op.padding, dilation=op.dilation,
                           groups=op.groups)


@lowers(*_CONV_T)
def _conv_transpose(op, x, w):
    return _CONV_T[type(op)](x, w, None, stride=op.stride, padding=op.padding,
                             output_padding=op.output_padding, groups=op.groups, dilation=op.dilation)
