"""Systems under test. ``get_backend(name)`` imports a backend's module only when it is named."""
from nnfuzz.backends.registry import BACKENDS, backend_class, get_backend

__all__ = ["BACKENDS", "backend_class", "get_backend"]
