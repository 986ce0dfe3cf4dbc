"""Relax lowerings of the pools: ``relax.op.nn`` max/avg pools (torch's floor mode), adaptive average
pools, and the global and adaptive max pools as reductions / an adaptive max written out per window."""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_lowers
from nnfuzz.ops.pool import spec as P

_MAX = {P.MaxPool1d: R.nn.max_pool1d, P.MaxPool2d: R.nn.max_pool2d, P.MaxPool3d: R.nn.max_pool3d}
_AVG = {P.AvgPool1d: R.nn.avg_pool1d, P.AvgPool2d: R.nn.avg_pool2d, P.AvgPool3d: R.nn.avg_pool3d}
_ADAPTIVE_AVG = {3: R.nn.adaptive_avg_pool1d, 4: R.nn.adaptive_avg_pool2d, 5: R.nn.adaptive_avg_pool3d}


@relax_lowers(*_MAX)
def _max_pool(op, g, x):
    return _MAX[type(op)](x, op.kernel, op.stride, op.padding, op.dilation)


@relax_lowers(*_AVG)
def _avg_pool(op, g, x):
    return _AVG[type(op)](x, op.kernel, op.stride, op.padding, op.dilation,
                          count_include_pad=bool(op.count_include_pad))


@relax_lowers(P.GlobalAvgPool)
def _global_avg_pool(op, g, x):
    return _ADAPTIVE_AVG[g.rank(x)](x, [1] * (g.rank(x) - 2))


@relax_lowers(P.GlobalMaxPool)
def _global_max_pool(op, g, x):
    return R.max(x, list(range(2, g.rank(x))), True)


@relax_lowers(P.AdaptiveAvgPool2d)
def _adaptive_avg_pool2d(op, g, x):
    return R.nn.adaptive_avg_pool2d(x, (op.out_h, op.out_w))


@relax_lowers(P.AdaptiveMaxPool2d)
def _adaptive_max_pool2d(op, g, x):
    """torch's windows: [floor(i * n / out), ceil((i + 1) * n / out)) per output index; the max of each,
    concatenated (Relax has no adaptive max pool)."""
    _, _, h, w = g.shape(x)
    rows = []
    for i in range(op.out_h):
        cols = []
        for j in range(op.out_w):
            win = R.strided_slice(x, [2, 3], [i * h // op.out_h, j * w // op.out_w],
                                  [-(-(i + 1) * h // op.out_h), -(-(j + 1) * w // op.out_w)])
            cols.append(R.max(win, [2, 3], True))
        rows.append(R.concat(cols, 3) if len(cols) > 1 else cols[0])
    return R.concat(rows, 2) if len(rows) > 1 else rows[0]
