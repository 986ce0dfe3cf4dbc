"""The registry of PyTorch lowerings, one function per abstract op class.

A lowering is ``fn(op, *tensors) -> tensor | list[tensor]`` for a *concrete* op. Register it with
``@lowers(OpClass, ...)``; lookup walks the class's MRO, so a family base class may carry a lowering
shared by its members. An op class with no lowering is not offered to torch-based models.
"""
from __future__ import annotations

from typing import Callable, Dict, Optional

from nnfuzz.errors import OpDefinitionError

LOWERINGS: Dict[type, Callable] = {}


def lowers(*op_classes):
    def deco(fn):
        for cls in op_classes:
            LOWERINGS[cls] = fn
        return fn

    return deco


def lower_each(table: dict) -> None:
    """Register ``{OpClass: fn(x)}`` pairs whose lowering ignores the op's attributes."""
    for cls, fn in table.items():
        LOWERINGS[cls] = (lambda f: (lambda op, *xs: f(*xs)))(fn)


def lowering_for(cls) -> Optional[Callable]:
    load_builtin_lowerings()
    for klass in cls.__mro__:
        fn = LOWERINGS.get(klass)
        if fn is not None:
            return fn
    return None


def has_torch_lowering(cls) -> bool:
    return lowering_for(cls) is not None


def run_op(op, *tensors) -> list:
    """Apply ``op``'s lowering and return its outputs as a list."""
    fn = lowering_for(type(op))
    if fn is None:
        raise OpDefinitionError(f"operator {op.name} has no torch lowering; register one with @lowers({op.name})")
    out = fn(op, *tensors)
    return list(out) if isinstance(out, (list, tuple)) else [out]


_loaded = False


def load_builtin_lowerings() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        import nnfuzz.materialize.torch.ops  # noqa: F401
