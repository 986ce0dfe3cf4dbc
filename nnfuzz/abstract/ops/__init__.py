"""nnfuzz's operator library, one family per module. Importing this package registers every op."""
from nnfuzz.abstract.ops import (  # noqa: F401
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
