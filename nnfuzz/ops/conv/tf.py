"""Convolutions as TF's channels-last kernels between transposes, with torch's symmetric padding done
by tf.pad and VALID kernels. TF's CPU Conv3D takes no groups and neither it nor the transposed
kernels take (float64) dilations: those run one group at a time, with the kernel dilated by zeros."""
from nnfuzz.ops.conv import spec as C
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers
from nnfuzz.materialize.tensorflow.layout import pad_spatial, shape_of, to_first, to_last


def _dilate_kernel(w, dilation):
    """Spatial-first kernel [*K, ...] with d-1 zeros between taps: the plain kernel equal to the dilated one."""
    for axis, d in enumerate(dilation):
        if d > 1:
            shape = shape_of(w)
            k = shape[axis]
            w = tf.stack([w] + [tf.zeros_like(w)] * (d - 1), axis=axis + 1)
            shape[axis] = k * d
            w = tf.reshape(w, shape)[(slice(None),) * axis + (slice(0, (k - 1) * d + 1),)]
    return w


def _by_group(fn, x, w, groups):
    """fn on each channel group of channels-last x and of w's last axis, outputs joined on channels."""
    if groups == 1:
        return fn(x, w)
    return tf.concat([fn(a, b) for a, b in zip(tf.split(x, groups, -1), tf.split(w, groups, -1))], -1)


def _conv_nd(x, w, stride, dilation):
    if len(stride) == 1:
        return tf.nn.conv1d(x, w, stride[0], "VALID", dilations=dilation[0])
    if len(stride) == 2:
        return tf.nn.conv2d(x, w, list(stride), "VALID", dilations=list(dilation))
    return tf.nn.conv3d(x, w, [1, *stride, 1], "VALID", dilations=[1, *dilation, 1])


@tf_lowers(C.Conv1d, C.Conv2d, C.Conv3d)
def _conv(op, x, w):
    r = len(op.stride)
    x = to_last(pad_spatial(x, op.padding))
    w = tf.transpose(w, [*range(2, r + 2), 1, 0])  # [O, C/g, *K] -> [*K, C/g, O]
    dilation = op.dilation
    if r == 3:  # 1-D/2-D kernels take groups (input depth a multiple of the filter's) and dilations
        w, dilation = _dilate_kernel(w, dilation), (1,) * r
        y = _by_group(lambda a, b: _conv_nd(a, b, op.stride, dilation), x, w, op.groups)
    else:
        y = _conv_nd(x, w, op.stride, dilation)
    return to_first(y)


@tf_lowers(C.ConvTranspose1d, C.ConvTranspose2d, C.ConvTranspose3d)
def _conv_transpose(op, x, w):
    """The full transposed conv (VALID, no padding), at least as long as torch's output (TF fills the
    part past the last window with zeros, as output_padding does), then cropped by ``padding``."""
    r = len(op.stride)
    n, _, *size = shape_of(x)
    w = _dilate_kernel(tf.transpose(w, [*range(2, r + 2), 1, 0]), op.dilation)  # -> [*K, O/g, C]
    kernel, out_per_group = shape_of(w)[:r], int(w.shape[r])
    out = [(s - 1) * st - 2 * p + k + o for s, st, p, k, o in zip(size, op.stride, op.padding, kernel,
                                                                      op.output_padding)]
    full = [(s - 1) * st + k + max(0, o - p) for s, st, p, k, o in zip(size, op.stride, op.padding, kernel,
                                                                          op.output_padding)]
    y = _by_group(lambda a, b: tf.nn.conv_transpose(a, b, [n, *full, out_per_group], list(op.stride), "VALID"),
                  to_last(x), w, op.groups)
    return to_first(y[(slice(None),) + tuple(slice(p, p + m) for p, m in zip(op.padding, out))])
