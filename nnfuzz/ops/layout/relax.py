"""Relax lowerings of the layout ops: one ``relax.op`` where Relax has it; the depth/space rearrangements
and Roll as reshapes, permutations, slices and concatenations (each says which)."""
import math

from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import relax_lowers
from nnfuzz.ops.layout import spec as L


@relax_lowers(L.Reshape)
def _reshape(op, g, x):
    return R.reshape(x, op.shape)


@relax_lowers(L.Flatten)
def _flatten(op, g, x):
    s = g.shape(x)
    return R.reshape(x, list(s[:op.axis]) + [math.prod(s[op.axis:])])


@relax_lowers(L.Transpose)
def _transpose(op, g, x):
    perm = list(range(g.rank(x)))
    perm[op.dim0], perm[op.dim1] = perm[op.dim1], perm[op.dim0]
    return R.permute_dims(x, perm)


@relax_lowers(L.Permute)
def _permute(op, g, x):
    return R.permute_dims(x, op.perm)


@relax_lowers(L.Squeeze)
def _squeeze(op, g, x):
    return R.squeeze(x, [op.axis])


@relax_lowers(L.Unsqueeze)
def _unsqueeze(op, g, x):
    return R.expand_dims(x, op.axis)


@relax_lowers(L.Expand)
def _expand(op, g, x):
    return R.broadcast_to(x, op.shape)


@relax_lowers(L.Tile)
def _tile(op, g, x):
    return R.tile(x, op.repeats)


def _blocks_to_space(g, x, b, split, perm):
    """A depth-to-space as reshape/permute/reshape: channels split as ``split(c // (b * b))`` (the block
    dims' place in the channel axis is what tells the modes apart), ``perm`` brings them beside h and w."""
    n, c, h, w = g.shape(x)
    y = R.permute_dims(R.reshape(x, [n, *split(c // (b * b), b), h, w]), perm)
    return R.reshape(y, [n, c // (b * b), h * b, w * b])


@relax_lowers(L.DepthToSpace)
def _depth_to_space(op, g, x):
    """torch's pixel_shuffle (CRD) as reshape/permute: TVM 0.27 cannot compile R.nn.pixel_shuffle (its
    legalization calls topi.nn.pixel_shuffle, which does not exist), and every graph with it would crash."""
    return _blocks_to_space(g, x, op.blocksize, lambda c, b: [c, b, b], [0, 1, 4, 2, 5, 3])


@relax_lowers(L.DepthToSpaceDCR)
def _depth_to_space_dcr(op, g, x):
    return _blocks_to_space(g, x, op.blocksize, lambda c, b: [b, b, c], [0, 3, 4, 1, 5, 2])


@relax_lowers(L.SpaceToDepth)
def _space_to_depth(op, g, x):
    # torch's pixel_unshuffle: (n, c, h/b, b, w/b, b) -> (n, c, b, b, h/b, w/b)
    n, c, h, w = g.shape(x)
    b = op.blocksize
    y = R.permute_dims(R.reshape(x, [n, c, h // b, b, w // b, b]), [0, 1, 3, 5, 2, 4])
    return R.reshape(y, [n, c * b * b, h // b, w // b])


@relax_lowers(L.Tril)
def _tril(op, g, x):
    return R.tril(x, op.diagonal)


@relax_lowers(L.Triu)
def _triu(op, g, x):
    return R.triu(x, op.diagonal)


@relax_lowers(L.Flip)
def _flip(op, g, x):
    return R.flip(x, op.axis)


@relax_lowers(L.Roll)
def _roll(op, g, x):
    n = g.shape(x)[op.axis]
    k = op.shift % n if n else 0
    if k == 0:
        return R.strided_slice(x, [op.axis], [0], [n])  # a roll by a multiple of the dim: x itself
    head = R.strided_slice(x, [op.axis], [n - k], [n])
    tail = R.strided_slice(x, [op.axis], [0], [n - k])
    return R.concat([head, tail], op.axis)
