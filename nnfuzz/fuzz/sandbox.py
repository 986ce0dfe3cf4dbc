"""Run a backend's compile and run in a long-lived worker process, so that a segfault, abort, hang or
runaway memory in the system under test kills only the worker.

    with Sandbox("ort-cpu", test_timeout=10) as sb:
        r = sb.run(model_bytes, {"x": x})       # RunResult(status="ok", outputs={...}) or error/crash/timeout

The worker (``nnfuzz.fuzz.worker``; fuzz/worker_handle.py starts and kills it) is a fresh interpreter
(``python -m``, never a fork of this process) in its own session, so killing its process group also
kills anything the system under test started. It imports the backend once and then serves runs over a
pipe; a worker that crashed, hung or ran out of memory is killed and a new one starts on the next ``run``.

How a run ends:

* ``ok``: outputs came back (``stage`` "execute").
* ``error``: compile or run raised an ordinary exception; ``error`` is ``Type: message``, ``detail`` the
  traceback (plus what the worker printed in the run). The worker survives.
* ``crash``: the worker died (``signal`` set and ``error`` "killed by SIGSEGV", or "worker exited with
  code N"), or its resident memory went above ``memory_limit_mb`` (polled from /proc while waiting) or an
  allocation failed under the address-space backstop: ``error`` "memory limit exceeded (...)". ``detail``
  is the tail of the worker's output (faulthandler prints the Python stack on a fatal signal).
* ``timeout``: the run took longer than its time limit; ``detail``: every thread's stack before the kill.

``stage`` is where the run ended ("compile" until the worker reports "execute"), ``part`` a gradient test's
forward or backward (as the worker reports entering it). A Sandbox is not thread-safe: use one per thread.
Given a campaign's StopRequest (``stop=``), a run or start in progress ends with ``Stopped`` soon after.
"""
from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

from nnfuzz.backends.base import BackendUnavailable
from nnfuzz.errors import ConfigError, InternalError, ModelBuildError, NNFuzzError
from nnfuzz.fuzz.worker_handle import WorkerHandle, killpg

POLL_S = 0.02            # how often the parent checks the worker's memory while waiting
DUMP_WAIT_S = 0.25       # time given to faulthandler to print the stacks of a hung worker


@dataclass
class RunResult:
    status: str              # "ok" | "error" | "crash" | "timeout"
    stage: str               # "compile" | "execute" (where it ended / died)
    outputs: Optional[dict]  # name -> np.ndarray when status == "ok"
    error: str = ""          # one-line summary
    detail: str = ""         # full text (traceback / worker output tail)
    signal: Optional[int] = None
    seconds: dict = field(default_factory=dict)  # {"compile", "execute", "ipc"} (+ "start" after a restart)
    exc_type: str = ""       # qualified exception type for status "error" (e.g. "tvm.error.OpNotImplemented")
    shapes: Optional[list] = None    # a dynamic model's run (docs/dynamic-shapes.md): every shape's outputs,
    shape: Optional[int] = None      # the shape it ended at when it failed,
    compiles: Optional[int] = None   # the compiles the system counted; ``unguarded``: Backend.unguarded_recompile's
    unguarded: Optional[dict] = None
    part: Optional[str] = None       # a gradient test's part it ended in: "forward" | "backward" (Backend.entering)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def result_of(answer: tuple, seconds: dict, output: str = "", rlimit_as_mb=None) -> RunResult:
    """The RunResult of a worker's answer to a run (fuzz/worker.py run_backend: "ok" or "error"), with
    the worker's seconds added to ``seconds``. ``output``: what the worker printed during the run;
    ``rlimit_as_mb``: its address-space limit, named when an allocation failed (a crash). nnfuzz's own
    model building failing in the worker raises ModelBuildError: no verdict of the system's."""
    if answer[0] == "ok":
        _, outputs, worker_s = answer[:3]
        seconds.update(worker_s)
        if len(answer) > 3:  # a dynamic model's run: outputs per shape
            return RunResult("ok", "execute", outputs[0], seconds=seconds, shapes=outputs,
                             compiles=answer[3]["compiles"], unguarded=answer[3].get("unguarded"))
        return RunResult("ok", "execute", outputs, seconds=seconds)
    _, stage, exc_type, summary, tb, worker_s, oom = answer[:7]
    shape, part = (answer[7].get("shape"), answer[7].get("part")) if len(answer) > 7 else (None, None)
    seconds.update(worker_s)
    detail = tb + (f"\n--- worker output ---\n{output}" if output.strip() else "")
    if oom:
        return RunResult("crash", stage, None,
                         f"memory limit exceeded ({summary}; address-space limit {rlimit_as_mb} MiB)",
                         detail, seconds=seconds, exc_type=exc_type, shape=shape, part=part)
    if exc_type == "nnfuzz.errors.ModelBuildError":
        raise ModelBuildError(f"{summary}\n{detail}")
    return RunResult("error", stage, None, summary, detail, seconds=seconds, exc_type=exc_type, shape=shape, part=part)


class Sandbox:
    """A backend behind a worker process. See the module docstring."""

    def __init__(self, backend: str, options: dict | None = None, *, test_timeout: float = 10.0,
                 memory_limit_mb: int = 4096, backend_path: str | None = None, start_timeout: float = 300.0,
                 address_space_limit: bool | None = None, stop=None, env: dict | None = None):
        """``backend``: a registry name ("ort-cpu"); ``backend_path`` ("module:Class") overrides the
        registry lookup. ``address_space_limit``: also set RLIMIT_AS in the worker to its mapped size after
        loading the backend plus ``2 * memory_limit_mb + 2048`` MiB, so allocations too fast for the RSS
        polling fail there; None (default) means on, except for GPU backends (CUDA maps huge ranges).
        ``stop``: a campaign's StopRequest (fuzz/stopping.py); once it is set, a run or start in progress
        is abandoned (its worker killed) and raises ``Stopped``. ``env``: variables set in the worker's
        environment (its share of the cores: fuzz/sizing.py thread_env)."""
        if test_timeout <= 0:
            raise ConfigError(f"test_timeout={test_timeout}; must be > 0 seconds")
        if memory_limit_mb <= 0:
            raise ConfigError(f"memory_limit_mb={memory_limit_mb}; must be > 0")
        self.backend = backend
        self.options = dict(options or {})
        self.test_timeout = float(test_timeout)
        self.memory_limit_mb = int(memory_limit_mb)
        self.backend_path = backend_path
        self.start_timeout = float(start_timeout)
        self.address_space_limit = address_space_limit
        self.stop = stop
        self.env = dict(env or {})
        self.workers_started = 0
        self.killed_retries = 0     # runs made again after their worker was killed from outside (SIGKILL)
        self._worker: Optional[WorkerHandle] = None
        self._info: dict = {}

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def info(self) -> dict:
        """The BackendInfo fields as a dict, plus the worker's pid, rss_mb, rlimit_as_mb, once started
        (``backend_info`` is the typed record)."""
        return dict(self._info)

    @property
    def pid(self) -> Optional[int]:
        """The current worker's pid, or None when no worker is running."""
        return self._worker.pid if self._alive() else None

    def _alive(self) -> bool:
        return self._worker is not None and not self._worker.exited()

    def start(self) -> dict:
        """Start the worker if needed; return ``info``.

        Raises BackendUnavailable if the backend cannot run here, ConfigError for bad options, and
        NNFuzzError with the worker's output if it fails or dies while starting."""
        if self._alive():
            return self.info
        self._drop()
        self._spawn()
        return self.info

    def close(self) -> None:
        """Stop the worker (a later ``run`` starts a new one)."""
        w, self._worker = self._worker, None
        if w is None:
            return
        if not w.exited():
            try:
                w.conn.send(("close",))
                w.wait_exit(2.0)
            except OSError:
                pass
        w.kill()  # also kills whatever the worker left running in its process group

    def __enter__(self) -> "Sandbox":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Sandbox({self.backend!r}, pid={self.pid}, timeout={self.test_timeout:g}s, " \
               f"memory_limit={self.memory_limit_mb}MiB)"

    def _check_stop(self) -> None:
        if self.stop is not None:
            self.stop.check()

    def _drop(self) -> None:
        w, self._worker = self._worker, None
        if w is not None:
            w.kill()

    def _spawn(self) -> None:
        from nnfuzz.backends.registry import backend_class

        if self.backend_path is None:
            backend_class(self.backend)  # unknown names fail here, with the list of known ones
        self._check_stop()
        w = WorkerHandle.spawn(self.env)
        self._worker = w
        self.workers_started += 1
        spec = {"backend": self.backend, "backend_path": self.backend_path, "options": self.options,
                "sys_path": list(sys.path), "as_limit": self.address_space_limit,
                "as_extra_mb": 2 * self.memory_limit_mb + 2048}
        try:
            self._start_handshake(w, spec)
        except BaseException:
            self._drop()
            raise

    def _start_handshake(self, w: WorkerHandle, spec: dict) -> None:
        what = self.backend_path or self.backend
        try:
            w.conn.send(("init", spec))
        except OSError:
            pass  # died already: reported below
        deadline = time.monotonic() + self.start_timeout
        while True:
            self._check_stop()
            try:
                if w.poll(0.05):
                    msg = w.conn.recv()
                    break
                if not w.exited():
                    if time.monotonic() < deadline:
                        continue
                    out = w.log_since(0)
                    raise NNFuzzError(f"the {what} worker did not start within {self.start_timeout:g}s"
                                      + (f"; its output:\n{out}" if out else ""))
            except (EOFError, OSError):
                pass
            # the connection ended or the worker exited: a stop killed it (Stopped), or say how
            self._check_stop()
            w.wait_exit(5.0)
            status = w.death_text()
            out = w.log_since(0)
            raise NNFuzzError(f"the {what} worker died while starting ({status})"
                              + (f"; its output:\n{out}" if out else "; it printed nothing"))
        kind = msg[0]
        if kind == "unavailable":
            raise BackendUnavailable(msg[1])
        if kind == "init_error":
            _, exc_type, text, tb = msg
            if exc_type.endswith("ConfigError"):
                raise ConfigError(text)
            raise NNFuzzError(f"the {what} worker failed while starting: {exc_type}: {text}\n{tb}")
        if kind != "ready":
            raise InternalError(f"unexpected message from the worker while starting: {kind!r}")
        w.info = msg[1]
        self._info = dict(msg[1])
        rss = w.info.get("rss_mb")
        if rss is not None and rss >= self.memory_limit_mb:
            raise ConfigError(f"memory_limit_mb={self.memory_limit_mb} is not above the {what} worker's "
                              f"resident memory once the backend is loaded ({rss} MiB); raise it")

    # -- running -----------------------------------------------------------------------------------

    @property
    def backend_info(self):
        """The backend's facts (a backends.base.BackendInfo), starting the worker if needed."""
        from nnfuzz.backends.base import BackendInfo

        if not self._info:
            self.start()
        return BackendInfo.from_dict(self._info)

    @property
    def format(self) -> str:
        """The model format the backend takes ("onnx" or "gir"), known once the worker started."""
        return self.backend_info.format

    def format_for(self, p) -> str:
        """The format the produced test ``p`` is sent in (fuzz/formats.py)."""
        from nnfuzz.fuzz.formats import format_for

        return format_for(self.backend_info, p)

    def payload(self, model, fmt: str | None = None) -> bytes:
        """``model`` (a materialize.model.Model) in ``fmt`` (default: the backend's format)."""
        from nnfuzz.materialize.portable import model_payload

        return model_payload(model.gir, model.weights, model.onnx, fmt or self.format, model.seed)

    def run_model(self, model, inputs: dict, *, timeout: float | None = None, fmt: str | None = None) -> RunResult:
        """Like ``run``, for a Model: sends it in ``fmt`` (default: the backend's format)."""
        if not self._info:
            self.start()
        return self.run(self.payload(model, fmt), inputs, timeout=timeout)

    def run(self, model_bytes: bytes, inputs, *, timeout: float | None = None) -> RunResult:
        """Compile ``model_bytes`` and run it on ``inputs`` in the worker (starting one if needed; a list of
        input dicts: a dynamic model compiled once and run at each shape, RunResult.shapes). A worker killed
        by SIGKILL was killed from outside (the kernel's OOM killer, a user: no system under test sends it
        to itself, and the sandbox's own memory kill says so): the run is made again once on a fresh worker,
        and the test takes that run's result (``killed_retries`` counts them)."""
        res = self._run(model_bytes, inputs, timeout)
        if res.status == "crash" and res.signal == signal.SIGKILL:
            self.killed_retries += 1
            again = self._run(model_bytes, inputs, timeout)
            again.seconds["killed_retry"] = sum(res.seconds.values())
            return again
        return res

    def _run(self, model_bytes: bytes, inputs, timeout: float | None) -> RunResult:
        timeout = self.test_timeout if timeout is None else float(timeout)
        seconds = {}
        self._check_stop()
        if not self._alive():
            t = time.perf_counter()
            self.start()
            seconds["start"] = time.perf_counter() - t
        w = self._worker
        mark = w.log_mark()
        t0 = time.perf_counter()
        try:
            at = {"shape": None, "part": None}  # where the run is: a dynamic model's shape, a gradient test's part
            res = self._wait(w, model_bytes, inputs, timeout, seconds, mark, t0, at)
            if res.status in ("crash", "timeout"):
                res.shape, res.part = at["shape"] if isinstance(inputs, list) else None, res.part or at["part"]
            return res
        except BaseException:
            # a stop (Stopped, KeyboardInterrupt) or a bug here: the worker may still be busy with this
            # model, and its late answer must never be read as the next run's, so it goes.
            self._drop()
            raise

    def _wait(self, w: WorkerHandle, model_bytes, inputs, timeout, seconds, mark, t0, at) -> RunResult:
        stage = "compile"
        try:
            w.conn.send(("runs" if isinstance(inputs, list) else "run", model_bytes, inputs))
        except OSError:  # died since the last run (BrokenPipe): reported as a crash of this run
            return self._crashed(w, stage, mark, t0, seconds)
        deadline = t0 + timeout
        limit = self.memory_limit_mb
        next_mem = t0 + POLL_S
        while True:
            self._check_stop()
            now = time.perf_counter()
            if now >= next_mem:
                rss = w.rss_mb()
                if rss is not None and rss > limit:
                    return self._memory_exceeded(w, stage, mark, t0, seconds, f"{rss} MiB > {limit} MiB")
                next_mem = now + POLL_S
            if now >= deadline:
                return self._timed_out(w, stage, mark, t0, seconds, timeout)
            try:
                ready = w.poll(min(next_mem, deadline) - now)
                msg = w.conn.recv() if ready else None
            except (EOFError, OSError):
                return self._crashed(w, stage, mark, t0, seconds)
            if msg is None:
                continue
            kind = msg[0]
            if kind == "stage":
                stage = msg[1]
            elif kind in ("shape", "part"):
                at[kind] = msg[1]
            elif kind in ("ok", "error"):
                res = result_of(msg, seconds, w.log_since(mark) if kind == "error" else "",
                                w.info.get("rlimit_as_mb"))
                self._ipc(seconds, t0)
                if res.status == "crash":  # out of memory: the worker goes
                    self._drop()
                else:
                    self._recycle_if_bloated(w)
                return res
            else:
                raise InternalError(f"unexpected message from the worker: {kind!r}")

    @staticmethod
    def _ipc(seconds: dict, t0: float) -> None:
        total = time.perf_counter() - t0
        seconds["ipc"] = max(0.0, total - seconds.get("compile", 0.0) - seconds.get("execute", 0.0))

    def _recycle_if_bloated(self, w: WorkerHandle) -> None:
        """A worker left above 3/4 of the memory limit after a run is replaced: a system that keeps a
        little per model (inductor's caches: ~0.5 MiB each) must not reach the limit during a run and
        have that run reported as a memory crash."""
        rss = w.rss_mb()
        if rss is not None and rss > 0.75 * self.memory_limit_mb:
            self._drop()

    def _crashed(self, w: WorkerHandle, stage, mark, t0, seconds) -> RunResult:
        w.wait_exit(2.0)  # the connection ends while the process is still exiting
        text = w.death_text()
        rc = w.proc.returncode
        sig = -rc if rc is not None and rc < 0 else None
        seconds["ipc"] = time.perf_counter() - t0
        out = w.log_since(mark)
        if "std::bad_alloc" in out:
            text = f"memory limit exceeded (std::bad_alloc; {text})"
        self._drop()
        return RunResult("crash", stage, None, text, out, signal=sig, seconds=seconds)

    def _memory_exceeded(self, w: WorkerHandle, stage, mark, t0, seconds, what) -> RunResult:
        killpg(w.pid)  # at once: no time for a stack dump while memory runs away
        detail = w.log_since(mark)
        self._drop()
        seconds["ipc"] = time.perf_counter() - t0
        return RunResult("crash", stage, None, f"memory limit exceeded ({what})", detail, seconds=seconds)

    def _timed_out(self, w: WorkerHandle, stage, mark, t0, seconds, timeout) -> RunResult:
        try:
            os.kill(w.pid, signal.SIGUSR1)  # faulthandler: print every thread's stack
            time.sleep(DUMP_WAIT_S)
        except ProcessLookupError:
            pass
        detail = w.log_since(mark)
        self._drop()
        seconds["ipc"] = time.perf_counter() - t0
        return RunResult("timeout", stage, None, f"timed out after {timeout:g}s in {stage}", detail,
                         seconds=seconds)
