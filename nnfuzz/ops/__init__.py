"""nnfuzz's operator library: one folder per family, one module per aspect.

``nnfuzz/ops/<family>/`` holds ``spec.py`` (the abstract op classes; z3 and numpy only), and where the
family has them ``torch.py`` (torch lowerings), ``tf.py`` (TensorFlow lowerings), ``onnx.py`` and ``relax.py`` (ONNX and TVM Relax lowerings), ``numpy.py``
(reference evals), ``ranges.py`` (value-range rules) and ``search.py`` (value-search aids: domain
losses beyond the derived ones, proxy slopes, tie rules). The families are the folder listing: each
registry imports, on first use, the aspect module it serves from every family that has one, so a new
family is a new folder and nothing else. Importing this package imports no framework.
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import threading
from typing import List

ASPECTS = ("spec", "torch", "tf", "onnx", "relax", "numpy", "ranges", "search")
_loaded: set = set()
_loading: set = set()
_lock = threading.RLock()  # lanes localize in threads: a second caller waits for the import under way


def families() -> List[str]:
    """The family folders, sorted by name."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg)


def load_aspect(aspect: str) -> None:
    """Import ``nnfuzz.ops.<family>.<aspect>`` of every family that has that module. Done once; an
    import that raises is raised again by every later call (no family is skipped silently). Another
    thread's call waits until the import under way has finished."""
    if aspect not in ASPECTS:
        raise ValueError(f"unknown operator aspect {aspect!r}; one of {ASPECTS}")
    with _lock:
        if aspect in _loaded or aspect in _loading:  # (_loading: this thread is importing that aspect)
            return
        _loading.add(aspect)
        try:
            for fam in families():
                name = f"{__name__}.{fam}.{aspect}"
                if importlib.util.find_spec(name) is not None:
                    importlib.import_module(name)
            _loaded.add(aspect)
        finally:
            _loading.discard(aspect)
