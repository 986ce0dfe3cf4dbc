"""OpInfo samples run in a worker process: a sample on which the library itself dies (an integer
division by zero raising SIGFPE in a kernel, an abort) or hangs is invalid, as OPERA treats a test its
own library cannot run, and must not end the migration.

The worker is spawned (a forked child of a process whose thread pools already ran can hang in them)
and kept for every entry, paying torch's and the OpInfo database's import once; after a death a fresh
worker goes on at the sample after the one that killed it. The worker finds each entry by name through
``resolver`` ("module:function", given the entry's name; the OpInfo database by default)."""
from __future__ import annotations

import importlib
import multiprocessing
import traceback
from typing import Iterator, Optional, Tuple

SAMPLE_TIMEOUT_S = 60.0
DEFAULT_RESOLVER = "nnfuzz.migrate.torch_opinfo:entry_by_name"


class EntryRunner:
    """``with EntryRunner(knobs, tolerances) as r: for event in r.events(name): ...``"""

    def __init__(self, knobs: dict, tolerances, resolver: str = DEFAULT_RESOLVER):
        self.knobs, self.tolerances, self.resolver = knobs, dict(tolerances), resolver
        self.ctx = multiprocessing.get_context("spawn")
        self.proc, self.conn = None, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._stop()
        return False

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child, self.knobs, self.tolerances, self.resolver),
                                     daemon=True)
        self.proc.start()
        child.close()

    def _stop(self) -> None:
        if self.proc is None:
            return
        try:
            self.conn.send(None)
        except (BrokenPipeError, OSError):
            pass  # already dead: joined below
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()
        self.proc, self.conn = None, None

    def events(self, name: str) -> Iterator[Tuple]:
        """Events of migrating entry ``name``'s samples: ("test", sample, MigratedTest) | ("drop", sample,
        reason) | ("error", sample, traceback text); a sample the worker died on gives ("drop", sample,
        "library-crash"), one past SAMPLE_TIMEOUT_S ("drop", sample, "library-timeout")."""
        start = 0
        while True:
            if self.proc is None:
                self._start()
            self.conn.send((name, start))
            current: Optional[str] = None
            while True:
                why, event = self._wait(), None
                if why is None:
                    try:
                        event = self.conn.recv()
                    except (EOFError, OSError):  # the worker died inside a sample
                        why = "library-crash"
                if why is not None:
                    self._kill()
                    yield ("drop", current, why)
                    break
                if event[0] == "start":
                    current, start = event[1], event[2] + 1
                elif event[0] == "end":
                    return
                else:
                    current = None
                    yield event
            if current is None:  # died between samples (in the op's sample generator): nothing to resume
                return

    def _wait(self) -> Optional[str]:
        """None when a message is ready; else why none will come."""
        try:
            if self.conn.poll(SAMPLE_TIMEOUT_S):
                return None
        except (EOFError, OSError):
            return "library-crash"
        return "library-timeout" if self.proc.is_alive() else "library-crash"

    def _kill(self) -> None:
        self.proc.kill()
        self.proc.join()
        self.conn.close()
        self.proc, self.conn = None, None


def _worker(conn, knobs, tolerances, resolver: str) -> None:
    import faulthandler

    from nnfuzz.migrate.record import Dropped
    from nnfuzz.migrate.torch_opinfo import migrate_sample, op_name, samples

    faulthandler.disable()  # a sample the library dies on is an expected outcome here, not a dump to show
    mod, fn = resolver.split(":")
    resolve = getattr(importlib.import_module(mod), fn)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        name, start = job
        info = resolve(name)
        for n, (dtype, k, sample) in enumerate(samples(info, knobs["dtypes"], knobs["max_per_op"])):
            if n < start:
                continue
            label = f"{op_name(info)}[{dtype}]#{k}"
            conn.send(("start", label, n))
            try:
                conn.send(("test", label, migrate_sample(info, dtype, k, sample, knobs["opset"], tolerances)))
            except Dropped as e:
                conn.send(("drop", label, e.reason))
            except Exception:  # noqa: BLE001 - a bug in nnfuzz: sent back in full, shown and counted there
                conn.send(("error", label, traceback.format_exc()))
        conn.send(("end",))
