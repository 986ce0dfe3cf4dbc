import torch
import torch.nn.functional as F

from nnfuzz.ops.norm import spec as N
from nnfuzz.materialize.torch.lowering import lowers


@lowers(N.BatchNorm)
def _batch_norm(op, x, w, b):
    # int(): while exporting, x.shape[1] is a traced value, and linspace over it would export its
    # constants as float64 (an ONNX BatchNormalization that ORT has no kernel for)
    c = int(x.shape[1])
    # fixed, non-trivial running statistics (deterministic constants in the graph), on x's device:
    # traced by dynamo, CPU statistics next to a CUDA x are a device mismatch (inductor-gpu)
    mean = torch.linspace(-0.5, 0.5, c, dtype=x.dtype, device=x.device)
    var = torch.linspace(0.5, 2.0, c, dtype=x.dtype, device=x.device)
    return F.batch_norm(x, mean, var, w, b, training=False, eps=op.eps)


@lowers(N.BatchNormTraining)
def _batch_norm_training(op, x, w, b):
    # the running statistics' update written out (torch's rule: batch mean, unbiased batch variance), not
    # F.batch_norm's in-place update of buffers: the ONNX exporter writes that update's outputs as float64
    c, m = int(x.shape[1]), op.momentum
    axes = [0] + list(range(2, x.dim()))
    mean = torch.linspace(-0.5, 0.5, c, dtype=x.dtype, device=x.device)
    var = torch.linspace(0.5, 2.0, c, dtype=x.dtype, device=x.device)
    y = F.batch_norm(x, None, None, w, b, training=True, eps=op.eps)
    batch_mean, batch_var = x.mean(axes), x.var(axes, correction=1)
    return y, (1 - m) * mean + m * batch_mean, (1 - m) * var + m * batch_var


@lowers(N.InstanceNorm)
def _instance_norm(op, x, w, b):
    return F.instance_norm(x, weight=w, bias=b, eps=op.eps)


@lowers(N.GroupNorm)
def _group_norm(op, x, w, b):
    return F.group_norm(x, op.groups, w, b, eps=op.eps)


@lowers(N.LayerNorm)
def _layer_norm(op, x, *params):
    w, b = params if op.affine else (None, None)
    return F.layer_norm(x, x.shape[x.dim() - op.k:], w, b, eps=op.eps)
