"""A table of values registered per abstract op class (lowerings, numpy evals, domain losses, proxy
slopes, tie rules, value-range rules), on ``multipledispatch``: ``lookup(cls)`` is single dispatch
on the op class, so a family base class may carry an entry its members share, and a user's subclass
inherits what its base registered. Lookups are cached per class (they sit on the generation and
search hot paths); registering clears the cache."""
from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Iterator, Optional

from multipledispatch import Dispatcher


class OpTable(MutableMapping):
    """``{op class: value}`` with dispatch: ``table[cls]`` is what was registered for ``cls`` itself,
    ``table.lookup(cls)`` the entry of ``cls`` or of its nearest registered base class."""

    def __init__(self, name: str = "op table"):
        self._dispatcher = Dispatcher(name)
        self._found: dict = {}

    def register(self, *op_classes):
        """Decorator: ``@table.register(OpA, OpB)`` stores the function for each class."""
        def deco(fn):
            for cls in op_classes:
                self[cls] = fn
            return fn

        return deco

    def lookup(self, cls) -> Optional[Any]:
        """The entry of ``cls`` or of its nearest base class that has one (None: none has)."""
        try:
            return self._found[cls]
        except KeyError:
            found = self._found[cls] = self._dispatcher.dispatch(cls)
            return found

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

    # ---- the mapping of registered classes -------------------------------------------------------
    def __setitem__(self, cls, value) -> None:
        self._dispatcher.add((cls,), value)
        self._found.clear()

    def __getitem__(self, cls):
        return self._dispatcher.funcs[(cls,)]

    def __delitem__(self, cls) -> None:
        del self._dispatcher.funcs[(cls,)]
        self._dispatcher._cache.clear()
        try:
            del self._dispatcher._ordering  # recomputed on the next dispatch
        except AttributeError:  # not computed yet
            pass
        self._found.clear()

    def __iter__(self) -> Iterator[type]:
        return iter([sig[0] for sig in self._dispatcher.funcs])

    def __len__(self) -> int:
        return len(self._dispatcher.funcs)
