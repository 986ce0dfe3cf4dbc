"""N sandboxes testing at once (``fuzz.workers``): the scheduling of a campaign's lanes.

A lane is one sandbox of the system under test (and one of the oracle's expected side, when that is
another system) driven by a thread of the campaign process. The system runs in the sandbox's own
process, so a lane's thread mostly waits on it and the lanes' tests overlap; a crash or hang kills only
that lane's worker, which restarts on the lane's next run (fuzz/sandbox.py) while the other lanes go on.
The threads share the campaign's model source (producers, or generation in the lane's thread) and hand
every verdict to the campaign's ``consume``; the campaign process alone writes the bug store, the dedup
index and the log, under the campaign's lock. The lanes' sandboxes are local (fuzz/sandbox.py) or Ray
actors (fuzz/ray_executor.py): this module does not tell them apart.

With one lane, the lane runs in the main thread, as a campaign always did.
"""
from __future__ import annotations

import threading
from typing import Callable, List, Optional

from nnfuzz.fuzz.stopping import Stopped

STATE_EVERY_S = 5.0   # how often the main thread records the seeds tested (fuzz/resume.py)


class Exhausted(Exception):
    """The model source has nothing more to give (every migrated test was taken)."""


class LostTest(Exception):
    """A test in flight was lost with the process that ran it (a Ray actor or its node died); the lane
    goes on with a new one. Counted in the campaign's summary (``lost``)."""


class Lane:
    """One sandbox (and its expected side's) and what it is doing, for the status panel."""

    def __init__(self, name: str, sandbox, expected=None):
        self.name, self.sandbox, self.expected = name, sandbox, expected
        self.state = "starting"
        self.tests = 0

    def describe(self) -> str:
        restarts = max(0, getattr(self.sandbox, "workers_started", 1) - 1)
        return f"{self.state}; {self.tests} tests" + (f", {restarts} restarts" if restarts else "")


def start_lanes(make: Callable[[int], Lane], first: Lane, n: int, stop) -> List[Lane]:
    """``first`` plus lanes 1 .. n-1 made by ``make(k)``, their sandboxes started at once (their imports
    overlap). A lane that cannot start fails the campaign with its error; the started ones are closed."""
    lanes = [first] + [make(k) for k in range(1, n)]
    errors: List[BaseException] = []

    def start(lane):
        try:
            for sb in (lane.sandbox, lane.expected):
                if sb is not None:
                    sb.start()
            lane.state = "ready"
        except BaseException as e:  # shown below, in the main thread
            errors.append(e)

    threads = [threading.Thread(target=start, args=(lane,), name=f"nnfuzz-start-{lane.name}", daemon=True)
               for lane in lanes[1:]]
    for t in threads:
        t.start()
    _join(threads, stop)
    if errors:
        close_lanes(lanes[1:])
        raise errors[0]
    return lanes


def close_lanes(lanes: List[Lane]) -> None:
    for lane in lanes:
        for sb in (lane.sandbox, lane.expected):
            if sb is not None:
                sb.close()


def _join(threads, stop, tick: Optional[Callable[[], None]] = None) -> None:
    """Wait for ``threads`` in the main thread, where signals arrive (a stop request reaches the
    threads through their sandboxes and the lane loop)."""
    while any(t.is_alive() for t in threads):
        for t in threads:
            t.join(0.1)
        if tick is not None:
            tick()


class Pool:
    """Runs the campaign's tests on its lanes until the time bound, max_tests or a stop."""

    def __init__(self, campaign, lanes: List[Lane]):
        self.c, self.lanes = campaign, lanes
        self.error: Optional[BaseException] = None
        campaign.pair_lanes(lanes)

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
        _join(threads, c.stop, self._tick)
        if self.error is not None and not isinstance(self.error, Stopped):
            raise self.error
        c.stop.check()

    def _tick(self) -> None:
        self.c.status.refresh()
        self.c.record_seeds(every=STATE_EVERY_S)

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
        while c.left() > 0.05 and not c.enough() and self.error is None:
            c.stop.check()
            lane.state = "waiting for a model"
            try:
                p = next_model()
            except Exhausted:
                return
            if p is None:
                continue
            lane.state = f"testing seed {p.seed}"
            try:
                c.consume(lane.sandbox, p, lane.name)
            except LostTest as e:
                c.lost(p, str(e))
            lane.tests += 1
            if main:
                self._tick()
        lane.state = "done"


def inline_source(c, lock: threading.Lock) -> Callable[[], object]:
    """Models generated in the lane's own thread, seed after seed (``fuzz.producers=0``)."""
    from nnfuzz.fuzz.produce import produce

    counter = [0]

    def next_model():
        with lock:
            i = counter[0]
            counter[0] += 1
        with c.stop.interruptible():  # (main thread only) nothing is written while a model is made
            return produce(c.cfg, c.ops, c.rows, c.seed_at(i), c.left())

    return next_model


def queue_source(producers, c) -> Callable[[], object]:
    """Models from producer processes or actors (``get`` is safe to call from several threads)."""

    def next_model():
        return producers.get(timeout=min(0.25, max(0.01, c.left())))

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


