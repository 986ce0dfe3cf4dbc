"""How many sandbox workers a campaign runs (``fuzz.workers``) and how many threads each may use.

``auto`` takes as many workers as the machine holds: the cores this process may run on divided by the
cores one worker of the system keeps busy (``BackendInfo.threads``), and no more than the machine's
memory holds at ``fuzz.memory_limit_mb`` per worker. A GPU system gets one worker (each would hold its
own GPU context on the one device). Each worker then computes on its share of the cores
(``worker_threads``), so N workers never oversubscribe them.
"""
from __future__ import annotations

import os
from typing import Optional

from nnfuzz.errors import ConfigError

# Threading knobs of the systems that read the environment when they load (TVM's runtime pool, OpenMP,
# BLAS), set per worker; ORT, TF, TFLite and OpenVINO read nnfuzz's own (backends/base.py worker_threads).
THREAD_ENV = ("TVM_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


# nnfuzz's own torch computations (the producers' value searches and reference runs, the campaign's float64
# twins and localization) convolve ever new shapes, and oneDNN keeps a compiled primitive per shape, up to 1024
# by default: an ort-cpu producer's convolutions held 136 MiB more after 2400 models than after 800 (memray),
# and its RSS grew 39 MiB per 5000 models (19 MiB with 32). Set for nnfuzz's processes only, not the systems'.
ONEDNN_CACHE_ENV, ONEDNN_CACHE = "ONEDNN_PRIMITIVE_CACHE_CAPACITY", "32"
_OWN_ENV: dict = {}  # what nnfuzz set in its own environment for itself alone (``systems_env`` drops it)


def bound_onednn_cache() -> None:
    """Cap oneDNN's primitive cache in this process and those it starts (ONEDNN_CACHE), unless the user set
    it; before the first convolution, which reads it."""
    if ONEDNN_CACHE_ENV not in os.environ:
        os.environ[ONEDNN_CACHE_ENV] = _OWN_ENV[ONEDNN_CACHE_ENV] = ONEDNN_CACHE


def systems_env(env) -> dict:
    """``env`` without what nnfuzz set for itself alone (a sandbox worker runs the system as it is set up)."""
    return {k: v for k, v in env.items() if _OWN_ENV.get(k) != v}


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def memory_mb() -> Optional[int]:
    """The machine's total memory in MiB (None where /proc/meminfo is missing)."""
    return proc_field_mb("/proc/meminfo", "MemTotal")


def proc_field_mb(path: str, field: str) -> Optional[int]:
    """The ``<field>:  N kB`` line of a /proc file, in MiB (None where the file or the line is missing)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) >> 10
    except (OSError, ValueError, IndexError):
        pass
    return None


def auto_workers(threads: int, device: str, memory_limit_mb: int) -> int:
    """``fuzz.workers=auto`` for a system whose worker keeps ``threads`` cores busy."""
    if device != "cpu":
        return 1
    n = cores() // max(1, int(threads))
    mem = memory_mb()
    if mem is not None:
        n = min(n, mem // max(1, int(memory_limit_mb)))
    return max(1, n)


def parse_workers(value) -> object:
    """``fuzz.workers``: "auto" or an int >= 1."""
    if value == "auto":
        return "auto"
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"fuzz.workers={value!r} must be auto or a whole number >= 1 (sandboxes testing at once)")
    return value


def resolve_workers(value, info, memory_limit_mb: int) -> int:
    """The number of workers for ``value`` ("auto" or N) and a started system's BackendInfo."""
    return auto_workers(info.threads, info.device, memory_limit_mb) if value == "auto" else int(value)


def thread_env(workers: int) -> dict:
    """The environment of one of ``workers`` sandbox workers: its share of the cores."""
    from nnfuzz.backends.base import WORKER_THREADS_ENV

    n = str(max(1, cores() // max(1, workers)))
    return {WORKER_THREADS_ENV: n, **{k: n for k in THREAD_ENV}}
