"""The test tier's executor (``fuzz.executor=inprocess``): each lane's sandbox runs its backend object
in this process and in the lane's own thread, with no worker process, so that a campaign's accounting,
oracles, saving and stopping can be tested in milliseconds.

Not for real campaigns: nothing is contained. A native crash of the system under test kills the
campaign, a hang hangs it, and memory is not bounded. ``fuzz.executor=local`` is what a campaign runs on.
Producers (``fuzz.producers`` > 0) are still processes: with ``fuzz.producers=0`` (CampaignConfig's
default) a campaign starts none. The background reducer (``fuzz.reduce``) makes sandboxes of its own.

An ``InProcessSandbox`` has the public methods of fuzz/sandbox.py's Sandbox and returns the same
RunResults, made by the same code: the worker's compile-and-run (fuzz/worker.py run_backend) and the
sandbox's reading of its answer (fuzz/sandbox.py result_of). What only a worker process shows (a death
by signal, a run past its time limit) a test backend asks for with ``die`` and ``take``, and a stop
signal arriving during the run with ``interrupt``; these raise exceptions that no ``except Exception``
catches, as a real signal would pass by any handler of the backend::

    from nnfuzz.fuzz import inprocess

    class SlowBackend(Backend):                 # (tests/fuzz/fake_backends.py has the test tier's backends)
        def run(self, compiled, inputs):
            inprocess.take(5.0)                 # a timeout RunResult when the run's time limit is below 5 s
            inprocess.die(signal.SIGSEGV)       # a crash RunResult: "killed by SIGSEGV", signal 11

Time is simulated: ``take(s)`` spends ``s`` seconds of the run's time limit without sleeping, so a slow
run and a hang are decided by counters, never by the wall clock.
"""
from __future__ import annotations

import signal as signals
import threading
import time
import traceback
from typing import Optional

from nnfuzz.errors import ConfigError, NNFuzzError
from nnfuzz.fuzz.sandbox import RunResult, Sandbox, result_of
from nnfuzz.fuzz.worker_handle import signal_name

_run = threading.local()  # the run in progress in this thread: its time limit (``limit``) and time spent


class _Died(BaseException):
    """``die``: a BaseException, so that no ``except Exception`` of the backend's or the worker code's
    mistakes it for an error (in a worker process it would end the worker: a crash there too)."""

    def __init__(self, signum: int, output: str):
        super().__init__(f"killed by {signal_name(signum)}")
        self.signum, self.output = signum, output


class _TimedOut(BaseException):
    """``take`` past the run's time limit."""


class _Interrupted(BaseException):
    """``interrupt``: a stop signal during the run."""

    def __init__(self, signum: int):
        super().__init__(signal_name(signum))
        self.signum = signum


def die(signum: int = signals.SIGSEGV, output: str = "") -> None:
    """(In a backend's compile or run.) The worker dies by ``signum`` having printed ``output``: the run
    ends as a crash, and the backend is made anew for the next run, as a worker would be."""
    raise _Died(signum, output)


def take(seconds: float) -> None:
    """(In a backend's compile or run.) Spend ``seconds`` of simulated time: past the run's time limit
    the run ends as a timeout (``math.inf``: a hang). Outside a run this does nothing."""
    limit = getattr(_run, "limit", None)
    if limit is None:
        return
    _run.spent += seconds
    if _run.spent > limit:
        raise _TimedOut()


def interrupt(signum: int = signals.SIGINT) -> None:
    """(In a backend's compile or run.) A stop signal arrives while the campaign waits for this run: the
    sandbox's stop request gets ``signum`` and the run ends with ``Stopped``, as in a worker's sandbox."""
    raise _Interrupted(signum)


class InProcessExecutor:
    """Lanes whose sandboxes run in this process (``fuzz.executor=inprocess``; see the module docstring)."""

    @staticmethod
    def workers(cc) -> int:
        """``fuzz.workers``, and 1 for ``auto`` (the test tier wants the same lanes on every machine)."""
        return 1 if cc.workers == "auto" else int(cc.workers)

    @staticmethod
    def sandbox(cc, name, options, path, stop, env, expected: bool = False):
        """``env`` (a worker's share of the cores) is not applied: it would change this process's."""
        return InProcessSandbox(name, options, test_timeout=cc.test_timeout, backend_path=path, stop=stop)


class InProcessSandbox:
    """A backend run in this process and thread, with fuzz/sandbox.py Sandbox's methods and results.
    Like a Sandbox, not thread-safe: one per thread."""

    def __init__(self, backend: str, options: dict | None = None, *, test_timeout: float = 10.0,
                 memory_limit_mb: int = 4096, backend_path: str | None = None, start_timeout: float = 300.0,
                 address_space_limit: bool | None = None, stop=None, env: dict | None = None):
        """As Sandbox's. What bounds or sets up a worker process (``memory_limit_mb``, ``start_timeout``,
        ``address_space_limit``, ``env``) has no process here to apply to: accepted, and unused."""
        if test_timeout <= 0:
            raise ConfigError(f"test_timeout={test_timeout}; must be > 0 seconds")
        self.backend, self.options, self.backend_path = backend, dict(options or {}), backend_path
        self.test_timeout = float(test_timeout)
        self.stop = stop
        self.workers_started = 0   # backends made (a "worker" per start, as Sandbox counts its processes)
        self._backend = None
        self._info: dict = {}

    @property
    def info(self) -> dict:
        return dict(self._info)

    @property
    def pid(self) -> Optional[int]:
        """None: there is no worker process."""
        return None

    def start(self) -> dict:
        """Make the backend if needed; return ``info``. Raises what a Sandbox's start raises."""
        from nnfuzz.backends.base import BackendUnavailable
        from nnfuzz.fuzz.worker import _load_backend, make_backend

        if self._backend is not None:
            return self.info
        self._check_stop()
        what = self.backend_path or self.backend
        try:
            cls = _load_backend({"backend": self.backend, "backend_path": self.backend_path})
            cls.check_available()
            self._backend, info = make_backend(cls, self.options)
        except (ConfigError, BackendUnavailable):
            raise
        except Exception as e:
            raise NNFuzzError(f"the {what} backend failed while starting: {type(e).__name__}: {e}") from e
        self._info = {**info, "rss_mb": None, "rlimit_as_mb": None}
        self.workers_started += 1
        return self.info

    def close(self) -> None:
        """Drop the backend (a later ``run`` makes a new one)."""
        self._backend = None

    def __enter__(self) -> "InProcessSandbox":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"InProcessSandbox({self.backend!r}, timeout={self.test_timeout:g}s)"

    def _check_stop(self) -> None:
        if self.stop is not None:
            self.stop.check()

    # Sandbox's own: the backend's facts and format (from ``_info``, starting if needed), the format a produced
    # test is sent in, a Model's bytes in a format, and running a Model
    backend_info = Sandbox.backend_info
    format = Sandbox.format
    format_for = Sandbox.format_for
    payload = Sandbox.payload
    run_model = Sandbox.run_model

    def run(self, model_bytes: bytes, inputs: dict, *, timeout: float | None = None) -> RunResult:
        """Compile ``model_bytes`` and run it on ``inputs`` here (making the backend if needed)."""
        import pickle

        from nnfuzz.fuzz.stopping import Stopped
        from nnfuzz.fuzz.worker import run_backend, run_backend_shapes, unsendable

        timeout = self.test_timeout if timeout is None else float(timeout)
        seconds = {}
        self._check_stop()
        if self._backend is None:
            t = time.perf_counter()
            self.start()
            seconds["start"] = time.perf_counter() - t
        stage, part = ["compile"], [None]
        t0 = time.perf_counter()
        _run.limit, _run.spent = timeout, 0.0
        try:
            if isinstance(inputs, list):  # a dynamic model: one compile, every shape
                answer = run_backend_shapes(self._backend, model_bytes, inputs, lambda s: stage.__setitem__(0, s),
                                            at_part=lambda p: part.__setitem__(0, p))
            else:
                answer = run_backend(self._backend, model_bytes, inputs, lambda s: stage.__setitem__(0, s),
                                     lambda p: part.__setitem__(0, p))
        except _TimedOut:
            self.close()
            return self._ended("timeout", stage[0], f"timed out after {timeout:g}s in {stage[0]}", t0, seconds,
                               part=part[0])
        except _Died as e:
            self.close()
            return self._ended("crash", stage[0], str(e), t0, seconds, e.output, e.signum, part[0])
        except _Interrupted as e:
            self.close()
            if self.stop is not None:
                self.stop.request(e.signum)
            raise Stopped(e.signum) from None
        finally:
            _run.limit = None
        try:  # what crosses a worker's pipe is a copy, and an output that cannot be pickled is an error
            answer = pickle.loads(pickle.dumps(answer))
        except Exception as e:
            answer = unsendable(answer, e)
        try:
            res = result_of(answer, seconds)
        except BaseException:  # nnfuzz's own ModelBuildError: a Sandbox drops its worker too
            self.close()
            raise
        Sandbox._ipc(seconds, t0)
        if res.status == "crash":  # out of memory: a worker would go
            self.close()
        return res

    @staticmethod
    def _ended(status, stage, error, t0, seconds, output: str = "", signum=None, part=None) -> RunResult:
        """A run that a worker process would not have survived: its traceback stands for the stack dump."""
        seconds["ipc"] = time.perf_counter() - t0
        detail = traceback.format_exc() + (f"\n--- worker output ---\n{output}" if output else "")
        return RunResult(status, stage, None, error, detail, signal=signum, seconds=seconds, part=part)

