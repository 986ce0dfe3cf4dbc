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
