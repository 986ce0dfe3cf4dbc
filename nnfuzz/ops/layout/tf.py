"""Layout operators: reshapes, transposes, broadcasts and masks that move or copy elements.
DepthToSpace/SpaceToDepth follow torch's pixel_shuffle channel order (channel-major, ONNX "CRD"),
TF's NHWC depth_to_space the block-major one (ONNX "DCR", as DepthToSpaceDCR), so the channels are
regrouped around TF's op."""
import numpy as np

from nnfuzz.ops.layout import spec as L
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lowers
from nnfuzz.materialize.tensorflow.layout import shape_of


@tf_lowers(L.Reshape)
def _reshape(op, x):
    return tf.reshape(x, op.shape)


@tf_lowers(L.Flatten)
def _flatten(op, x):
    shape = shape_of(x)
    return tf.reshape(x, shape[:op.axis] + [int(np.prod(shape[op.axis:]))])


@tf_lowers(L.Transpose)
def _transpose(op, x):
    perm = list(range(len(x.shape)))
    perm[op.dim0], perm[op.dim1] = op.dim1, op.dim0
    return tf.transpose(x, perm)


@tf_lowers(L.Permute)
def _permute(op, x):
    return tf.transpose(x, op.perm)


@tf_lowers(L.Squeeze)
def _squeeze(op, x):
    return tf.squeeze(x, [op.axis])


@tf_lowers(L.Unsqueeze)
def _unsqueeze(op, x):
    return tf.expand_dims(x, op.axis)


@tf_lowers(L.Expand)
def _expand(op, x):
    return tf.broadcast_to(x, op.shape)


@tf_lowers(L.Tile)
def _tile(op, x):
    return tf.tile(x, op.repeats)


@tf_lowers(L.DepthToSpace)
def _depth_to_space(op, x):
    n, c, h, w = shape_of(x)
    b = op.blocksize
    if b == 1:  # TF wants a block size of at least 2
        return tf.identity(x)
    # channel c_out * b*b + k (torch) -> NHWC channel k * C_out + c_out (TF)
    x = tf.reshape(tf.transpose(tf.reshape(x, [n, c // (b * b), b * b, h, w]), [0, 3, 4, 2, 1]), [n, h, w, c])
    return tf.transpose(tf.nn.depth_to_space(x, b), [0, 3, 1, 2])


@tf_lowers(L.DepthToSpaceDCR)
def _depth_to_space_dcr(op, x):
    if op.blocksize == 1:  # TF wants a block size of at least 2
        return tf.identity(x)
    # TF's NHWC channel (i*b + j)*C + c goes to offset (i, j) of channel c: the DCR order itself
    return tf.transpose(tf.nn.depth_to_space(tf.transpose(x, [0, 2, 3, 1]), op.blocksize), [0, 3, 1, 2])


@tf_lowers(L.SpaceToDepth)
def _space_to_depth(op, x):
    n, c, h, w = shape_of(x)
    b = op.blocksize
    if b == 1:
        return tf.identity(x)
    y = tf.nn.space_to_depth(tf.transpose(x, [0, 2, 3, 1]), b)  # NHWC channel k * C + c_in
    y = tf.transpose(tf.reshape(y, [n, h // b, w // b, b * b, c]), [0, 4, 3, 1, 2])
    return tf.reshape(y, [n, c * b * b, h // b, w // b])


def _triangle(keep, op, x):
    """x where ``keep`` (np.tril/np.triu of the last two dims at op.diagonal) is true, else zero."""
    mask = keep(np.ones(shape_of(x)[-2:], dtype=bool), op.diagonal)
    return tf.where(mask, x, tf.zeros_like(x))


@tf_lowers(L.Tril)
def _tril(op, x):
    return _triangle(np.tril, op, x)


@tf_lowers(L.Triu)
def _triu(op, x):
    return _triangle(np.triu, op, x)


@tf_lowers(L.Flip)
def _flip(op, x):
    return tf.reverse(x, [op.axis])


@tf_lowers(L.Roll)
def _roll(op, x):
    return tf.roll(x, op.shift, op.axis)
