"""The registry of PyTorch lowerings, one function per abstract op class.

A lowering is ``fn(op, *tensors) -> tensor | list[tensor]`` for a *concrete* op. Register it with
``@lowers(OpClass, ...)``; lookup walks the class's MRO, so a family base class may carry a lowering
shared by its members. An op class with no lowering is not offered to torch-based models.
"""
from __future__ import annotations

import contextlib
from typing import Callable, Optional

import numpy as np
import torch

from nnfuzz.abstract.op import AbsOpBase, op_from_json
from nnfuzz.abstract.optable import OpTable
from nnfuzz.errors import OpDefinitionError
from nnfuzz.ops import load_aspect

LOWERINGS = OpTable("torch lowering")
lowers = LOWERINGS.register


def static_tensor(make: Callable, args: tuple, device) -> "torch.Tensor":
    """``make(*args)``, a numpy array that depends only on static shapes and attributes (indices, resize
    taps), as a tensor on ``device``. torch.compile calls it once while tracing and keeps the result as a
    constant; traced into, its numpy code became torch ops on data-dependent values, which inductor
    refused ("Could not guard on data-dependent expression"): a false crash on every GatherElements,
    ScatterElements, ScatterND and ONNX-mode Resize model. An op among ``args`` travels as its JSON
    (torch.compile passes only plain constants to such a call)."""
    args = tuple((_OP, a.to_json()) if isinstance(a, AbsOpBase) else a for a in args)
    if _static_calls is not None:
        _static_calls.append(args)
    dtype, values = _static_values(make, args)
    return torch.tensor(values, dtype=getattr(torch, dtype), device=device)


_OP = "nnfuzz-op"
_static_calls: Optional[list] = None  # while static_calls() records: each static_tensor call's arguments


@contextlib.contextmanager
def static_calls():
    """Record the arguments of every static_tensor call made inside (eager runs only): a module that makes
    one cannot be compiled with symbolic sizes ("assume_constant_result argument conversion failed"), so
    its form is not shape-generic (materialize/dynamic.py)."""
    global _static_calls
    outer, _static_calls = _static_calls, []
    try:
        yield _static_calls
    finally:
        _static_calls = outer


@torch.compiler.assume_constant_result
def _static_values(make, args: tuple):
    """(dtype name, nested lists): plain constants, since a traced graph takes one constant tensor per
    such function at most."""
    arr = np.asarray(make(*[op_from_json(a[1]) if isinstance(a, tuple) and len(a) == 2 and a[0] == _OP else a
                            for a in args]))
    return str(arr.dtype), arr.tolist()


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
