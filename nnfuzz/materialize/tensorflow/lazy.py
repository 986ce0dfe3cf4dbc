"""``tf``: TensorFlow, imported on first attribute access (so registering lowerings costs nothing)."""
from __future__ import annotations

import importlib
import os


class _LazyModule:
    def __init__(self, name: str):
        self._name = name
        self._mod = None

    def __getattr__(self, attr):
        if self._mod is None:
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # no banner of CPU-feature notes per process
            self._mod = importlib.import_module(self._name)
        return getattr(self._mod, attr)


tf = _LazyModule("tensorflow")
