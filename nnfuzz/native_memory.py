"""Native memory nnfuzz's own processes hold on to: oneDNN's primitive cache, which they bound, glibc's heaps
per thread, which the campaign process does without, and glibc's free heap pages, which they give back now
and then.

torch runs oneDNN primitives (Gelu, Conv, ConvTranspose, ...) in the campaign process (localization,
float64 twins) and in the producers (the value search, the reference), and oneDNN keeps each one it
creates, up to 1024 by default, about 27 KiB apiece. A fuzzer's shapes rarely repeat, so the cache filled
for an hour and held memory it never used again: memray's largest live allocations in an ort-cpu
campaign process. A value search reruns one graph, whose primitives fit in far fewer.

The bound is set in the environment (oneDNN reads it when it first creates a primitive), so the
producers inherit it; a value the user set is kept. The systems under test are not nnfuzz's: their
workers get the environment without the bound nnfuzz added (``system_env``).
"""
from __future__ import annotations

import ctypes
import os
import time

ONEDNN_CACHE_ENV = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
ONEDNN_CACHE_CAPACITY = 128
_added = False
TRIM_EVERY_S = 10.0  # seconds between two malloc_trim calls of one process (a call takes about a millisecond)
_trimmed_at = 0.0


def bound_native_caches() -> None:
    """Bound oneDNN's primitive cache for this process and those it starts (unless the user set it)."""
    global _added
    if ONEDNN_CACHE_ENV not in os.environ:
        os.environ[ONEDNN_CACHE_ENV] = str(ONEDNN_CACHE_CAPACITY)
        _added = True


def system_env(env: dict) -> dict:
    """``env`` for a process of a system under test: without the bound nnfuzz added itself."""
    if _added and env.get(ONEDNN_CACHE_ENV) == str(ONEDNN_CACHE_CAPACITY):
        return {k: v for k, v in env.items() if k != ONEDNN_CACHE_ENV}
    return env


M_ARENA_MAX = -8  # mallopt's parameter number (glibc's malloc.h)


def one_heap() -> bool:
    """Make the threads this process starts from now on allocate from glibc's main heap (``mallopt``
    M_ARENA_MAX 1; False where not glibc). By default each thread gets a heap of its own, and torch's oneDNN
    ConvTranspose left each thread's heap holding what its largest convolution needed, malloc_trim or not:
    40 MiB after one [1, 8, 256, 256] float32 ConvTranspose in a thread, 11 MiB in the main heap. An
    ort-cpu campaign's two lane threads held 84 MiB so after 30 minutes (gdb: each thread's arena). The
    lanes allocate little in parallel (they wait on their workers, and Python code holds the GIL)."""
    mallopt = _glibc("mallopt")
    return bool(mallopt and mallopt(M_ARENA_MAX, 1))


def trim_heap(every: float = 0.0) -> bool:
    """Give glibc's free heap pages back to the system (``malloc_trim(0)``, every arena), at most once per
    ``every`` seconds; True when pages went back (False: too soon, none free, or no glibc). glibc keeps what
    a process frees in the middle of a heap: an ort-cpu sandbox worker held 5 to 9 MiB so after 20 minutes,
    which this gave back; the campaign process 3 MiB."""
    global _trimmed_at
    if time.monotonic() - _trimmed_at < every:
        return False
    _trimmed_at = time.monotonic()
    malloc_trim = _glibc("malloc_trim")
    return bool(malloc_trim and malloc_trim(0))


def _glibc(name: str):
    """glibc's function ``name`` in this process, or None where there is none (musl, macOS)."""
    try:
        return getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
