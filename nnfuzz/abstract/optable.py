"""A table of values registered per abstract op class (lowerings, numpy evals, domain losses, proxy
gradients, value-range rules). Lookup walks the class's MRO, so a family base class may carry an
entry its members share, and a user's subclass inherits what its base registered."""
from __future__ import annotations

from typing import Any, Optional


class OpTable(dict):
    def register(self, *op_classes):
        """Decorator: ``@table.register(OpA, OpB)`` stores the function for each class."""
        def deco(fn):
            for cls in op_classes:
                self[cls] = fn
            return fn

        return deco

    def for_graph(self, gir, what: str, decorator: str) -> list:
        """The entry of each instruction's op, in order; an op without one is an OpDefinitionError naming
        ``what`` is missing and the ``@decorator(Op)`` that registers it."""
        from nnfuzz.errors import OpDefinitionError

        fns = []
        for inst in gir.insts:
            fn = self.lookup(type(inst.op))
            if fn is None:
                raise OpDefinitionError(f"operator {inst.op.name} has no {what}; register one with "
                                        f"@{decorator}({inst.op.name})")
            fns.append(fn)
        return fns

    def lookup(self, cls) -> Optional[Any]:
        """The entry of ``cls`` or of its nearest base class that has one (None: none has)."""
        for klass in cls.__mro__:
            if klass in self:
                return self[klass]
        return None
