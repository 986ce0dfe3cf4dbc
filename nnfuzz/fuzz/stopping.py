"""Stopping a campaign: SIGINT (Ctrl-C), SIGTERM and SIGHUP all ask for the same clean stop.

A stop signal only sets the campaign's ``StopRequest``; the campaign then ends at the next point where
nothing is half-done: between tests, while it waits for a producer's model, or while a sandbox waits on
its worker (``Sandbox(stop=...)``: the run is abandoned and the worker killed). There ``Stopped`` is
raised; the campaign ends its producers, workers and background reducer, and the summary prints (exit
code 130, as for Ctrl-C). Saving a bug and writing its log line are never cut short by a first signal;
a second signal stops at once wherever the campaign is (a bug folder is still written whole or not at
all: triage/folder.py).
"""
from __future__ import annotations

import contextlib
import signal
import threading
from typing import Optional

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
EXIT_CODE = 128 + signal.SIGINT   # what a shell reports for Ctrl-C; the same for every stop signal


class Stopped(BaseException):
    """The campaign was asked to stop by ``signum``. A BaseException, like KeyboardInterrupt: no
    ``except Exception`` handler mistakes it for a failure of the code it passes through."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"stopped by {self.name}")

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class StopRequest:
    """Whether (and by which signal) the campaign was asked to stop. Read by the campaign between
    tests, by its sandboxes while they wait (also from the background reducer's thread)."""

    def __init__(self):
        self.signum: Optional[int] = None
        self._interruptible = 0

    def is_set(self) -> bool:
        return self.signum is not None

    @property
    def name(self) -> Optional[str]:
        return signal.Signals(self.signum).name if self.signum is not None else None

    def request(self, signum: int = signal.SIGTERM) -> None:
        if self.signum is None:
            self.signum = signum

    def check(self) -> None:
        """Raise ``Stopped`` if a stop was asked for."""
        if self.signum is not None:
            raise Stopped(self.signum)

    @contextlib.contextmanager
    def interruptible(self):
        """A block of the main thread that holds nothing half-written (generating a model): a stop
        signal raises ``Stopped`` inside it at once rather than waiting for the block to end."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        self.check()
        self._interruptible += 1
        try:
            yield
        finally:
            self._interruptible -= 1

    @contextlib.contextmanager
    def on_signals(self):
        """Turn SIGINT, SIGTERM and SIGHUP into stop requests for the duration of the block (in the
        main thread only: elsewhere Python delivers no signals, and the block just runs)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        old = {s: signal.signal(s, self._on_signal) for s in STOP_SIGNALS}
        try:
            yield self
        finally:
            for s, handler in old.items():
                signal.signal(s, handler)

    def _on_signal(self, signum, frame) -> None:
        again = self.signum is not None
        self.request(signum)
        if again or self._interruptible:
            raise Stopped(signum)
