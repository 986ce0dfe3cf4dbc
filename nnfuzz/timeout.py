"""A wall-clock bound on a block of code, for work that may run away (export, solving)."""
from __future__ import annotations

import contextlib
import signal
import threading

from nnfuzz.errors import ExportError


class Timeout(ExportError):
    pass


@contextlib.contextmanager
def time_limit(seconds: float, what: str = "operation"):
    """Raise ``Timeout`` if the block runs longer than ``seconds``.

    Uses SIGALRM, so it bounds only code on the main thread; elsewhere (no signals) the block runs
    unbounded and callers needing a hard bound must use a worker process.
    """
    if seconds is None or seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def _fire(signum, frame):
        raise Timeout(f"{what} exceeded its time bound of {seconds:g}s")

    old = signal.signal(signal.SIGALRM, _fire)
    prev_left, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if prev_left:
            signal.setitimer(signal.ITIMER_REAL, prev_left)
