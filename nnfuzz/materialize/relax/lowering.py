"""The registry of TVM Relax lowerings, one function per abstract op class.

A Relax lowering is ``fn(op, g, *inputs) -> expr | [exprs]`` for a *concrete* op: ``inputs`` are Relax
expressions, ``g`` a ``RelaxGraph`` (shape and dtype of an input, scalar and index constants), and the
result is built from ``tvm.relax.op.*`` calls (nested calls are fine: the BlockBuilder binds each).
It must compute exactly what the op's torch lowering computes (the reference). Register it with
``@relax_lowers(OpClass, ...)``; lookup walks the class's MRO like the other lowering tables. An op
without a Relax lowering makes its graph unbuildable as Relax: the TVM backend then receives it as ONNX.

Lowerings create no tensor constants beyond scalars and int64 index vectors (``g.index``): TVM 0.27
cannot serialize a tensor constant (``tvm.ir.save_json`` and ``script(show_meta=True)`` segfault), and
the module's TVMScript print (a bug folder's model.py) must be complete without metadata. Weights are
parameters of ``main``, bound to constants just before compiling (``build.bind_weights``).
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from nnfuzz.abstract.optable import OpTable
from nnfuzz.ops import load_aspect

RELAX_LOWERINGS = OpTable("Relax lowering")
INDEX_CHUNK = 64  # values per shape in RelaxGraph.index (why: its docstring)
CAST_SCALARS = {"bfloat16": "float32", "uint8": "int32"}  # scalar dtypes TVMScript cannot print inline
relax_lowers = RELAX_LOWERINGS.register


def relax_each(table: dict) -> None:
    """Register ``{OpClass: fn(*inputs)}`` for ops whose lowering ignores the op's attributes."""
    for cls, fn in table.items():
        RELAX_LOWERINGS[cls] = (lambda f: (lambda op, g, *xs: f(*xs)))(fn)


def relax_lowering_for(cls) -> Optional[Callable]:
    load_aspect("relax")
    return RELAX_LOWERINGS.lookup(cls)


def has_relax_lowering(cls) -> bool:
    return relax_lowering_for(cls) is not None


def graph_relax_lowerings(gir) -> list:
    load_aspect("relax")
    return RELAX_LOWERINGS.for_graph(gir, "Relax lowering", "relax_lowers")


def relax_lowerable(op_names) -> bool:
    """Whether every op named (``GraphIR.op_names()``) has a Relax lowering."""
    from nnfuzz.abstract import OP_REGISTRY

    return all(name in OP_REGISTRY and has_relax_lowering(OP_REGISTRY[name]) for name in set(op_names))


class RelaxGraph:
    """What a lowering may ask about its inputs and the constants it may make."""

    def __init__(self, bb, printable: bool = False):
        from tvm import relax

        self.bb, self.op, self.relax = bb, relax.op, relax
        self.printable = printable  # long index vectors as shapes, for TVMScript (``index``)

    def shape(self, x) -> tuple:
        return tuple(int(d) for d in x.ty.shape.values)

    def rank(self, x) -> int:
        return len(x.ty.shape.values)

    def dtype(self, x) -> str:
        return str(x.ty.dtype)

    def scalar(self, value, like_or_dtype):
        """A 0-d constant of ``value`` in the dtype of ``like_or_dtype`` (an expression or a dtype name)."""
        dt = like_or_dtype if isinstance(like_or_dtype, str) else self.dtype(like_or_dtype)
        if dt == "bool":
            value = bool(value)
        elif not dt.startswith(("float", "bfloat")):
            value = int(value)
        if dt in CAST_SCALARS:  # TVMScript prints such a constant only as metadata: a wider one, cast
            return self.op.astype(self.relax.const(value, CAST_SCALARS[dt]), dt)
        return self.relax.const(value, dt)

    def index(self, values: Sequence[int]):
        """An int64 vector of ``values``: a constant, or (short, or ``printable``) shapes turned into tensors,
        in chunks of at most ``INDEX_CHUNK`` concatenated. TVMScript prints a constant vector only as
        metadata (and TVM 0.27's ``script(show_meta=True)`` segfaults), so model.py and the standalone
        script read shapes; but the compile those cost grows fast with their length (3125 values, a
        GatherElements on [5, 5, 5, 5, 5]: 6.8 s of CPU in chunks of 64, 11.7 s in 256, 22.4 s in 16,
        0.25 s as a constant; tvm-cpu campaign 27's 0041 timed out at 10 s on two), so what nnfuzz compiles
        holds a long one as a constant. One shape of about 1500 values or more segfaults TVM 0.27's
        compiler (a campaign's bug 0024, 2026-11-23)."""
        import numpy as np

        vals = [int(v) for v in values]
        if len(vals) > INDEX_CHUNK and not self.printable:
            return self.relax.const(np.asarray(vals, dtype=np.int64), "int64")
        parts = [self.op.shape_to_tensor(self.relax.ShapeExpr(vals[k:k + INDEX_CHUNK]))
                 for k in range(0, len(vals), INDEX_CHUNK)] or [self.op.shape_to_tensor(self.relax.ShapeExpr([]))]
        return parts[0] if len(parts) == 1 else self.op.concat(parts, 0)

    def indices(self, array):
        """An int64 tensor of ``array``'s values and shape (``index`` reshaped)."""
        import numpy as np

        a = np.asarray(array, dtype=np.int64)
        return self.op.reshape(self.index(a.reshape(-1).tolist()), list(a.shape))

    def emit(self, expr):
        """Bind ``expr`` now (for a lowering that asks an intermediate value's shape)."""
        return self.bb.emit(expr)
