"""Helpers shared by the TF lowerings: channels-first <-> channels-last transposes, static shapes,
and spatial padding of a channels-first tensor."""
from nnfuzz.materialize.tensorflow.lazy import tf


def shape_of(x) -> list:
    return [int(d) for d in x.shape]


def to_last(x):
    """[N, C, *S] -> [N, *S, C]."""
    r = len(x.shape)
    return tf.transpose(x, [0, *range(2, r), 1])


def to_first(x):
    """[N, *S, C] -> [N, C, *S]."""
    r = len(x.shape)
    return tf.transpose(x, [0, r - 1, *range(1, r - 1)])


def pad_spatial(x, padding, value=0):
    """Pad each spatial dim of channels-first ``x`` by ``padding[i]`` on both sides with ``value``."""
    if not any(padding):
        return x
    return tf.pad(x, [[0, 0], [0, 0]] + [[p, p] for p in padding], constant_values=tf.cast(value, x.dtype))


def compute_dtype(x):
    """float32 for half-precision floats (torch's CPU kernels accumulate them in float), else x's dtype."""
    return tf.float32 if x.dtype in (tf.float16, tf.bfloat16) else x.dtype
