"""Convolutions and transposed convolutions over 1-3 spatial dims (no bias: the lowerings pass
None), one generic N-d implementation each, in float64 (rounded once by eval_op).

Conv:          x[N, C, *S], w[O, C/g, *K]; channels split into g groups, group i of the output
               reads group i of the input:
               y[n, o, p] = sum_{c, j} xpad[n, c, p*stride + j*dilation] * w[o, c, j].
ConvTranspose: x[N, C, *S], w[C, O/g, *K]; the adjoint of Conv: each input element scatters
               x[n, c, i] * w[c, o, j] to position i*stride + j*dilation of a full-size output,
               of which ``[pad, full - pad)`` is kept (the output padding extends ``full`` at
               the end, with positions no input reaches).
"""
import itertools

import numpy as np

from nnfuzz.ops.conv import spec as C
from nnfuzz.ops.pool.numpy import out_sizes, positions, window_view
from nnfuzz.reference.registry import evaluates


def f64(x):
    return np.asarray(x, dtype=np.float64)


def _offsets(kernel):
    return itertools.product(*(range(k) for k in kernel))


@evaluates(C.Conv1d, C.Conv2d, C.Conv3d)
def _conv(op, x, w):
    x, w, g = f64(x), f64(w), op.groups
    (n, _, *size), (o, c_g, *kernel) = x.shape, w.shape
    out = out_sizes(size, kernel, op.stride, op.padding, op.dilation)
    xg = x.reshape(n, g, c_g, *size)  # [N, g, C/g, *S]
    wg = w.reshape(g, o // g, c_g, *kernel)  # [g, O/g, C/g, *K]
    y = np.zeros((n, g, o // g, *out))
    for j in _offsets(kernel):
        patch = _tap(xg, j, op, out)  # [N, g, C/g, *S']
        y += np.einsum("ngc...,goc->ngo...", patch, wg[(Ellipsis,) + j])
    return y.reshape(n, o, *out)


def _tap(xg, j, op, out):
    """What kernel offset ``j`` meets at each output position, the padding read as 0, gathered per spatial
    dim: no padded copy of the input (a large padding of a 3-D input made one of gigabytes)."""
    for ax, (jj, n) in enumerate(zip(j, out)):
        axis = 3 + ax
        idx, ok = positions(xg.shape[axis], n, 1, op.stride[ax], op.padding[ax] - jj * op.dilation[ax], 1)
        xg = np.take(xg, idx[:, 0], axis=axis)
        if not ok.all():
            xg = np.where(ok[:, 0].reshape((n,) + (1,) * (xg.ndim - axis - 1)), xg, 0.0)
    return xg


@evaluates(C.ConvTranspose1d, C.ConvTranspose2d, C.ConvTranspose3d)
def _conv_transpose(op, x, w):
    x, w, g = f64(x), f64(w), op.groups
    (n, c, *size), (_, o_g, *kernel) = x.shape, w.shape
    full = [(s - 1) * st + d * (k - 1) + 1 + op_
            for s, k, st, d, op_ in zip(size, kernel, op.stride, op.dilation, op.output_padding)]
    xg = x.reshape(n, g, c // g, *size)  # [N, g, C/g, *S]
    wg = w.reshape(g, c // g, o_g, *kernel)  # [g, C/g, O/g, *K]
    y = np.zeros((n, g, o_g, *full))
    for j in _offsets(kernel):
        target = window_view(y, j, op.dilation, op.stride, size)  # positions i*stride + j*dilation
        target += np.einsum("ngc...,gco->ngo...", xg, wg[(Ellipsis,) + j])
    kept = tuple(slice(p, f - p) for p, f in zip(op.padding, full))
    y = y[(Ellipsis,) + kept]
    return y.reshape(n, g * o_g, *y.shape[3:])
