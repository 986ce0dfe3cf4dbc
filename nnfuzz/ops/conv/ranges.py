"""Value-range rules of the convolutions (see nnfuzz/abstract/ranges.py): output positions that no
input position reaches are exactly 0."""
from __future__ import annotations

from nnfuzz.abstract.ranges import UNKNOWN, VRange, numel, value_range
from nnfuzz.ops.conv import spec as CV


def _gap(out_size: int, hits) -> bool:
    return len({o for o in hits if 0 <= o < out_size}) < out_size


@value_range(CV.Conv1d, CV.Conv2d, CV.Conv3d, CV.ConvTranspose1d, CV.ConvTranspose2d, CV.ConvTranspose3d)
def _conv(op, rs, ts):
    x, w = ts[0], ts[1]
    transposed = isinstance(op, CV.ConvTransposeNd)
    out = op.type_transfer([x, w])[0]
    for k, (size, ks, s, p, d) in enumerate(zip(x.shape[2:], w.shape[2:], op.stride, op.padding, op.dilation)):
        size, ks, o_size = int(size), int(ks), int(out.shape[2 + k])
        if size * ks > 100000 or o_size * ks > 100000 or not (size and ks and o_size):
            continue
        if transposed:
            hits = (i * s - p + j * d for i in range(size) for j in range(ks))
        else:  # output o reads input o*s - p + j*d; all of them in the padding: 0
            hits = (o for o in range(o_size) if any(0 <= o * s - p + j * d < size for j in range(ks)))
        if _gap(o_size, hits) and numel(out.shape):
            return VRange(zero=True)
    return UNKNOWN
