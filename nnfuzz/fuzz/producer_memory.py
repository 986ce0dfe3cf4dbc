"""How much a producer process has grown: each producer notes its resident size after every model it
makes, and its base, the size after its first BASE_MODELS models (the imports and the first caches are
in it by then). The campaign replaces the producers with fresh ones once one has grown by more than
``fuzz.producer_growth`` over its base (fuzz/producers.py).

Why: torch keeps a JIT-compiled oneDNN kernel for each convolution shape it runs, and nnfuzz draws new
shapes all the time, so a producer grows for as long as it lives: 44 % in an hour of ort-cpu (2 producers,
980 -> 1408 MiB), 9 % in 30 minutes of tvm-cpu, where a producer makes 25 times fewer models but builds
Relax modules too. Linux only (/proc/self/status); elsewhere nothing is noted and no producer is replaced
for its size.
"""
from __future__ import annotations

# a fresh producer's first models fill its caches quickly (410 -> 445 MiB in 1000-2000 ort-cpu models): its
# base is taken after these. Taken after 200, the ort-cpu soak replaced its producers every 40 s.
BASE_MODELS = 2000


def note(slots, k: int, made: int) -> None:
    """(In producer ``k``, after its ``made``-th model.)"""
    from nnfuzz.fuzz.sizing import proc_field_mb

    mb = proc_field_mb("/proc/self/status", "VmRSS") or 0
    slots.rss[k] = mb
    if made == BASE_MODELS:
        slots.base[k] = mb


def grown(slots, growth: float) -> bool:
    """Whether a producer has grown by more than ``growth`` (a share) over its base."""
    return growth > 0 and any(b > 0 and r > b * (1 + growth) for r, b in zip(slots.rss, slots.base))
