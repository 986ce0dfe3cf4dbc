"""The registry of PyTorch lowerings, one function per abstract op class.

A lowering is ``fn(op, *tensors) -> tensor | list[tensor]`` for a *concrete* op. Register it with
``@lowers(OpClass, ...)``; lookup walks the class's MRO, so a family base class may carry a lowering
shared by its members. An op class with no lowering is not offered to torch-based models.
"""
from __future__ import annotations

from typing import Callable, Optional

from nnfuzz.abstract.optable import OpTable
from nnfuzz.errors import OpDefinitionError
from nnfuzz.ops import load_aspect

LOWERINGS = OpTable("torch lowering")
lowers = LOWERINGS.register


def lower_each(table: dict) -> None:
    """Register ``{OpClass: fn(x)}`` pairs whose lowering ignores the op's attributes."""
    for cls, fn in table.items():
        LOWERINGS[cls] = (lambda f: (lambda op, *xs: f(*xs)))(fn)


def lowering_for(cls) -> Optional[Callable]:
    load_builtin_lowerings()
    return LOWERINGS.lookup(cls)


def graph_lowerings(gir) -> list:
    """The lowering of each instruction of ``gir``, in order; an op without one is an error."""
    load_builtin_lowerings()
    return LOWERINGS.for_graph(gir, "torch lowering", "lowers")


def lowering_error(inst, gir, e: Exception, note: str) -> OpDefinitionError:
    """The error for a lowering that raised on ``inst``'s inputs, naming the op and the input types."""
    ins = ", ".join(str(gir.vars[x]) for x in inst.inputs)
    return OpDefinitionError(f"torch lowering of {inst.op!r} raised {type(e).__name__}: {e} on inputs [{ins}] "
                             f"({note})")


def has_torch_lowering(cls) -> bool:
    return lowering_for(cls) is not None


def run_op(op, *tensors) -> list:
    """Apply ``op``'s lowering and return its outputs as a list."""
    fn = lowering_for(type(op))
    if fn is None:
        raise OpDefinitionError(f"operator {op.name} has no torch lowering; register one with @lowers({op.name})")
    out = fn(op, *tensors)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def load_builtin_lowerings() -> None:
    load_aspect("torch")
