"""Torch lowerings of nnfuzz's own operators, one module per abstract family."""
from nnfuzz.materialize.torch.ops import (  # noqa: F401
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
