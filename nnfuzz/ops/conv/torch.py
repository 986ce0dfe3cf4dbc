import torch
import torch.nn.functional as F

from nnfuzz.ops.conv import spec as C
from nnfuzz.materialize.torch.lowering import lowers

_CONV = {C.Conv1d: F.conv1d, C.Conv2d: F.conv2d, C.Conv3d: F.conv3d}
_CONV_T = {C.ConvTranspose1d: F.conv_transpose1d, C.ConvTranspose2d: F.conv_transpose2d,
           C.ConvTranspose3d: F.conv_transpose3d}


@lowers(*_CONV)
def _conv(op, x, w):
    conv = _CONV[type(op)]
    if x.dtype == torch.float16 and x.device.type == "cpu" and op.groups > 1 and w.shape[1] == 1:
        # torch 2.13's CPU float16 depthwise conv (oneDNN's brdgmm kernel) never returns for some shapes
        # (9 channels, length 1, kernel 40, padding 38+): computed in float32 and rounded once, as the
        # numpy reference computes it
        return conv(x.float(), w.float(), None, stride=op.stride, padding=op.padding, dilation=op.dilation,
                    groups=op.groups).half()
    return conv(x, w, None, stride=op.stride, padding=op.padding, dilation=op.dilation, groups=op.groups)


@lowers(*_CONV_T)
def _conv_transpose(op, x, w):
    return _CONV_T[type(op)](x, w, None, stride=op.stride, padding=op.padding,
                             output_padding=op.output_padding, groups=op.groups, dilation=op.dilation)
