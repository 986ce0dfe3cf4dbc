"""TensorFlow lowerings of nnfuzz's own operators, one module per abstract family."""
from nnfuzz.materialize.tensorflow.ops import (  # noqa: F401
    binary,
    combine,
    conv,
    elementwise,
    layout,
    linear,
    norm,
    pad,
    pool,
    reduce,
    resize,
    select,
    tfonly,
)
