"""N sandboxes testing at once (``fuzz.workers``): the scheduling of a campaign's lanes.

A lane is one sandbox of the system under test (and one of the oracle's expected side, when that is
another system) driven by a thread of the campaign process. The system runs in the sandbox's own
process, so a lane's thread mostly waits on it and the lanes' tests overlap; a crash or hang kills only
that lane's worker, which restarts on the lane's next run (fuzz/sandbox.py) while the other lanes go on.
The threads share the campaign's model source (producers, or generation in the lane's thread) and hand
each model with their lane to the campaign's ``consume`` (the pool drives the campaign through the few
methods of ``Driver``, never its state); the campaign process alone writes the bug store, the dedup
index and the log, under the campaign's lock. The lanes' sandboxes are local (fuzz/sandbox.py) or Ray
actors (fuzz/ray_executor.py): this module does not tell them apart.

With one lane, the lane runs in the main thread, as a campaign always did.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, List, Optional, Protocol

from nnfuzz.fuzz.status import WAITING
from nnfuzz.fuzz.stopping import Stopped

class Exhausted(Exception):
    """The model source has nothing more to give (every migrated test was taken)."""


class LostTest(Exception):
    """A test in flight was lost with the process that ran it (a Ray actor or its node died); the lane
    goes on with a new one. Counted in the campaign's summary (``lost``)."""


class Lane:
    """One sandbox of the system under test (and its own expected-side sandbox, when another run of the
    model is the expected side) and what it is doing, for the status panel."""

    def __init__(self, name: str, sandbox, expected_sandbox=None):
        self.name, self.sandbox, self.expected_sandbox = name, sandbox, expected_sandbox
        self.state = "starting"
        self.tests = 0
        self.waited = 0.0  # seconds spent waiting for a model (or making one, with fuzz.producers=0)
        self._starter: Optional[threading.Thread] = None
        self._start_error: Optional[BaseException] = None

    def start_in_background(self) -> None:
        """Start the sandboxes in a thread: their imports overlap the probe and the other lanes' tests."""
        def start():
            try:
                for sb in self.sandboxes():
                    sb.start()
                self.state = "ready"
            except BaseException as e:  # raised by wait_started, in the lane's own thread
                self._start_error = e

        self._starter = threading.Thread(target=start, name=f"nnfuzz-start-{self.name}", daemon=True)
        self._starter.start()

    def wait_started(self) -> None:
        """Wait for ``start_in_background``; its error (a stop, a worker that cannot start) is raised here."""
        if self._starter is not None:
            self._starter.join()
            self._starter = None
        if self._start_error is not None:
            raise self._start_error

    def sandboxes(self) -> list:
        return [sb for sb in (self.sandbox, self.expected_sandbox) if sb is not None]

    def describe(self) -> str:
        restarts = max(0, getattr(self.sandbox, "workers_started", 1) - 1)
        return f"{self.state}; {self.tests} tests" + (f", {restarts} restarts" if restarts else "")


def more_lanes(make: Callable[[int], Lane], n: int) -> List[Lane]:
    """Lanes 1 .. n-1 made by ``make(k)``, their sandboxes starting in the background (lane 0, started
    first, probes the system meanwhile). A lane that cannot start fails the campaign with its error."""
    lanes = [make(k) for k in range(1, n)]
    for lane in lanes:
        lane.start_in_background()
    return lanes


def close_lanes(lanes: List[Lane]) -> None:
    for lane in lanes:
        if lane._starter is not None:  # a sandbox closed while it starts could be left running
            lane._starter.join()
        for sb in lane.sandboxes():
            sb.close()


def _join(threads, tick: Callable[[], None]) -> None:
    """Wait for ``threads`` in the main thread, where signals arrive (a stop request reaches the
    threads through their sandboxes and the lane loop)."""
    while any(t.is_alive() for t in threads):
        for t in threads:
            t.join(0.1)
        tick()


class Driver(Protocol):
    """What the pool needs of a campaign (fuzz/loop.py Campaign)."""

    stop: object                                  # the StopRequest (fuzz/stopping.py)

    def left(self) -> float: ...
    def enough(self) -> bool: ...
    def claim(self) -> bool: ...
    def release(self) -> None: ...
    def consume(self, lane: Lane, p, worker: Optional[str] = None) -> None: ...
    def lost(self, p, why: str) -> None: ...
    def tick(self) -> None: ...


class Pool:
    """Runs the campaign's tests on its lanes until the time bound, max_tests or a stop."""

    def __init__(self, campaign: Driver, lanes: List[Lane]):
        self.c, self.lanes = campaign, lanes
        self.error: Optional[BaseException] = None

    def run(self, next_model: Callable[[], object]) -> None:
        """``next_model()``: a Produced, None (nothing yet), or raises Exhausted. Raises Stopped after
        a stop signal, or the first error of a lane (a bug in nnfuzz: never lost in a thread)."""
        c = self.c
        if len(self.lanes) == 1:
            self._loop(self.lanes[0], next_model)
            return
        threads = [threading.Thread(target=self._guarded, args=(lane, next_model), daemon=True,
                                    name=f"nnfuzz-lane-{lane.name}") for lane in self.lanes]
        for t in threads:
            t.start()
        _join(threads, self.c.tick)
        if self.error is not None and not isinstance(self.error, Stopped):
            raise self.error
        c.stop.check()

    def _guarded(self, lane: Lane, next_model) -> None:
        try:
            self._loop(lane, next_model)
        except BaseException as e:  # Stopped, or a bug: the main thread raises it
            if self.error is None:
                self.error = e
        finally:
            lane.state = "done"

    def _loop(self, lane: Lane, next_model) -> None:
        c = self.c
        main = threading.current_thread() is threading.main_thread()
        lane.wait_started()
        while c.left() > 0.05 and not c.enough() and self.error is None:
            c.stop.check()
            if not c.claim():  # the other lanes' tests under way reach max_tests: wait for their verdicts
                time.sleep(0.01)
                continue
            try:
                lane.state = WAITING
                t0 = time.monotonic()
                try:
                    p = next_model()
                except Exhausted:
                    return
                finally:
                    lane.waited += time.monotonic() - t0  # the status panel names a starved stage from it
                if p is None:
                    continue
                lane.state = f"testing seed {p.seed}"
                try:
                    c.consume(lane, p, lane.name)
                except LostTest as e:
                    c.lost(p, str(e))
            finally:
                c.release()
            lane.tests += 1
            if main:
                c.tick()
        lane.state = "done"


def inline_source(make: Callable[[int], object], stop) -> Callable[[], object]:
    """Models made in the lane's own thread by ``make(i)``, the campaign's i-th model (``fuzz.producers=0``)."""
    lock = threading.Lock()
    counter = [0]

    def next_model():
        with lock:
            i = counter[0]
            counter[0] += 1
        with stop.interruptible():  # (main thread only) nothing is written while a model is made
            return make(i)

    return next_model


def queue_source(producers, left: Callable[[], float]) -> Callable[[], object]:
    """Models from producer processes or actors (``get`` is safe to call from several threads)."""

    def next_model():
        return producers.get(timeout=min(0.25, max(0.01, left())))

    return next_model


def iter_source(items) -> Callable[[], object]:
    """Models from an iterator (migrated tests, in priority order), shared by the lanes."""
    lock = threading.Lock()
    it = iter(items)

    def next_model():
        with lock:
            try:
                return next(it)
            except StopIteration:
                raise Exhausted from None

    return next_model


