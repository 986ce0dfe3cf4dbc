"""Known limitations of the systems under test, as data (not log greps scattered in code).

Each backend class lists its own (``Backend.known``, next to the backend in ``nnfuzz/backends/<system>.py``):
which op/dtype (None: any), the error pattern, and what it means: ``unsupported`` errors are the system
saying it lacks an op or dtype (verdict UNSUPPORTED, never a bug); ``io`` entries are limits of the Python
API used to feed the system (also UNSUPPORTED). ``classify`` reads them by engine (``Backend.engine``:
"ort" covers ort-cpu and ort-gpu).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Optional, Tuple


@dataclass(frozen=True)
class Known:
    pattern: str                # regex searched in the error text
    kind: str = "unsupported"   # unsupported | io
    op: Optional[str] = None
    dtype: Optional[str] = None
    note: str = ""


@functools.lru_cache(maxsize=None)
def known_of(engine: str) -> Tuple[Known, ...]:
    """The known limitations of ``engine``: those of every backend class with that engine, in the
    registry's order, each once. The built-in backends are read first; the entry-point backends only for
    an engine no built-in has (so another package's backend is imported only when its engine is asked)."""
    from nnfuzz.backends.registry import backend_class, builtin_classes, plugin_backends

    classes = [c for c in builtin_classes() if c.engine == engine]
    if not classes:
        classes = [c for c in map(backend_class, plugin_backends()) if c.engine == engine]
    return tuple(dict.fromkeys(k for c in classes for k in c.known))


def classify(engine: str, error_text: str) -> Optional[Known]:
    """The known limitation matching ``error_text`` on ``engine`` (a ``Backend.engine``), or None."""
    for k in known_of(engine):
        if re.search(k.pattern, error_text):
            return k
    return None
