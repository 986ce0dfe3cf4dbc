"""Systems under test. ``backend_class(name)`` turns a backend name (built-in, ``nnfuzz.backends`` entry
point, or "module:Class") into its class, importing its module only then; each backend carries its own
knowledge (known limitations, error patterns, repro snippet, issue template: ``Backend``'s attributes)."""
from nnfuzz.backends.registry import BACKENDS, backend_class, get_backend, known_backends

__all__ = ["BACKENDS", "backend_class", "get_backend", "known_backends"]
