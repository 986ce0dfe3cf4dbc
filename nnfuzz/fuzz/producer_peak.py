"""A producer's peak memory per model. An hour of ort-cpu (issue 30's soak) caught a producer at 6.6 GB
for a moment, ten times its usual size, between two 30-s samples; which model did it is not in any
sample. Each producer resets the kernel's peak (``/proc/self/clear_refs``) before a model and reads it
(``VmHWM``) after: a model that took more than PEAK_NOTE_MB has ``producer_peak_mb`` in its test record
(campaign.jsonl), so its seed and graph are at hand. Linux only; elsewhere nothing is recorded."""
from __future__ import annotations

from typing import Optional

PEAK_NOTE_MB = 1536   # producers run at 0.4-0.6 GB (ort-cpu soak): 3x that is a spike worth a record


def reset() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets the peak resident set size
    except OSError:
        pass


def peak_mb() -> Optional[int]:
    from nnfuzz.fuzz.sizing import proc_field_mb

    return proc_field_mb("/proc/self/status", "VmHWM")


def note(rec: dict) -> None:
    """Add ``producer_peak_mb`` to a model's record where it took more than PEAK_NOTE_MB."""
    mb = peak_mb()
    if mb is not None and mb > PEAK_NOTE_MB:
        rec["producer_peak_mb"] = mb
