"""Symbolic shapes in Relax-native models (docs/dynamic-shapes.md): a dynamic graph's ``main`` takes its
inputs as ``R.Tensor(("n", 4))``, one ``tirx.Var`` per family symbol (shared by every input that has it;
symbols equal at every shape of the family share one), and Relax infers every value's shape as an
expression of them.

``SymbolicShapes`` holds those expressions, read from a flat build of the graph (every instruction in
``main``) and checked against the graph's own types at every shape of the family (each expression
evaluated under the assignment must give the dims ``GraphIR.at(k)`` says). A function the layout cuts
out of ``main`` takes its parameters with the same dims, its symbols as its own ``tirx.Var``s (a dim that is
an expression, ``n * 3``, becomes one more symbol of that function), which Relax binds at each call.

A lowering that asks a symbolic dim (``RelaxGraph.shape``) cannot be built symbolically: the build
raises, and the ``relax`` form of that graph stays static (materialize/relax/form.py).
"""
from __future__ import annotations

import operator
from typing import Dict

from nnfuzz.errors import OpDefinitionError
from nnfuzz.gir import GraphIR

_OPS = {"Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "FloorDiv": operator.floordiv,
        "FloorMod": operator.mod, "Min": min, "Max": max}


def is_static(d) -> bool:
    return isinstance(d, int) or type(d).__name__ == "IntImm"


def evaluate(expr, values: Dict[str, int]) -> int:
    """A Relax shape expression's value with the family's symbols set to ``values``."""
    kind = type(expr).__name__
    if isinstance(expr, int) or kind == "IntImm":
        return int(expr if isinstance(expr, int) else expr.value)
    if kind == "Var":
        return int(values[expr.name])
    if kind in _OPS:
        return int(_OPS[kind](evaluate(expr.a, values), evaluate(expr.b, values)))
    raise OpDefinitionError(f"the Relax shape expression {expr} ({kind}) is not one nnfuzz evaluates")


class SymbolicShapes:
    """The family's symbols as ``tirx.Var``s and every value's Relax shape (``dims``) over them."""

    def __init__(self, gir: GraphIR):
        from tvm import tirx

        self.gir = gir
        self.symbols = {}
        syms, assignments = gir.family.symbols(), gir.family.assignments
        for s in syms:  # symbols equal at every shape are one Var (Relax gives two Vars it cannot prove equal,
            # combined elementwise, no shape)
            same = next(t for t in syms if all(a[t] == a[s] for a in assignments))
            self.symbols[s] = self.symbols[same] if same != s else tirx.Var(s, "int64")
        self.dims: Dict[str, tuple] = {}

    def input_dims(self, name: str) -> tuple:
        """An input's dims in ``main``'s signature: its symbols where the family has them."""
        axes = self.gir.family.dims.get(name) or [None] * len(self.gir.vars[name].shape)
        return tuple(int(d) if s is None else self.symbols[s] for d, s in zip(self.gir.vars[name].shape, axes))

    def param_dims(self, name: str, local: Dict[str, object]) -> tuple:
        """Value ``name``'s dims as a parameter of a function cut out of ``main``, whose own symbols are
        ``local`` (filled here: one ``tirx.Var`` per distinct symbolic dim)."""
        from tvm import tirx

        out = []
        for d in self.dims[name]:
            if is_static(d):
                out.append(int(d if isinstance(d, int) else d.value))
                continue
            key = d.name if type(d).__name__ == "Var" else f"({d})"
            if key not in local:
                local[key] = tirx.Var(key if type(d).__name__ == "Var" else f"d{len(local)}", "int64")
            out.append(local[key])
        return tuple(out)

    def record(self, env: Dict[str, object]) -> None:
        """Read every value's shape from a flat build's ``env`` and check it at every shape of the family."""
        for name, var in env.items():
            shape = var.ty.shape
            if shape is None:
                raise OpDefinitionError(f"Relax infers no shape for {name} ({var.ty}) from the symbolic inputs")
            self.dims[name] = tuple(shape.values)
        for k, values in enumerate(self.gir.family.assignments):
            gk = self.gir.at(k)
            for name, dims in self.dims.items():
                got = [evaluate(d, values) for d in dims]
                if got != [int(d) for d in gk.vars[name].shape]:
                    raise OpDefinitionError(f"Relax's shape of {name}, {list(dims)}, is {got} at {values}; the graph "
                                            f"says {gk.vars[name]}")
