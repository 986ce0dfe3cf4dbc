import torch.nn.functional as F

from nnfuzz.ops.pool import spec as P
from nnfuzz.materialize.torch.lowering import lowers

_MAX = {P.MaxPool1d: F.max_pool1d, P.MaxPool2d: F.max_pool2d, P.MaxPool3d: F.max_pool3d}
_AVG = {P.AvgPool1d: F.avg_pool1d, P.AvgPool2d: F.avg_pool2d, P.AvgPool3d: F.avg_pool3d}
_ADAPTIVE_AVG = {3: F.adaptive_avg_pool1d, 4: F.adaptive_avg_pool2d, 5: F.adaptive_avg_pool3d}


@lowers(*_MAX)
def _max_pool(op, x):
    if not x.is_floating_point():
        # torch 2.13's CPU max_pool3d of a channels-last integer tensor (the output of some ops is) refuses a
        # D*H*W above its dtype's signed max (127 for int8 and uint8, 32767 for int16); the contiguous kernel
        # has no such bound
        x = x.contiguous()
    return _MAX[type(op)](x, op.kernel, op.stride, op.padding, op.dilation)


@lowers(*_AVG)
def _avg_pool(op, x):
    return _AVG[type(op)](x, op.kernel, op.stride, op.padding, count_include_pad=op.count_include_pad)


@lowers(P.GlobalAvgPool)
def _global_avg_pool(op, x):
    return _ADAPTIVE_AVG[x.dim()](x, 1)


@lowers(P.GlobalMaxPool)
def _global_max_pool(op, x):
    return x.amax(dim=tuple(range(2, x.dim())), keepdim=True)


@lowers(P.AdaptiveAvgPool2d)
def _adaptive_avg_pool2d(op, x):
    return F.adaptive_avg_pool2d(x, (op.out_h, op.out_w))


@lowers(P.AdaptiveMaxPool2d)
def _adaptive_max_pool2d(op, x):
    return F.adaptive_max_pool2d(x, (op.out_h, op.out_w))
