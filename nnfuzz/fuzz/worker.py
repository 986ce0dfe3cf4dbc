"""The sandbox worker: a long-lived process that loads one backend and compiles and runs models for
the parent (``nnfuzz.fuzz.sandbox.Sandbox``) over a ``multiprocessing`` connection.

Started as ``python -m nnfuzz.fuzz.worker FD PARENT_PID PDEATHSIG`` (never forked from the parent), in
its own session, with stdout and stderr going to a log file the parent reads after a crash or a hang.

Protocol (tuples, pickled by ``Connection.send``)::

    parent -> worker   ("init", {backend, backend_path, options, sys_path, as_limit, as_extra_mb})
    worker -> parent   ("ready", info) | ("unavailable", message) | ("init_error", type, message, traceback)
    parent -> worker   ("run", model_bytes, inputs)
    worker -> parent   ("stage", "execute")                      (a run starts in "compile")
    worker -> parent   ("part", "forward" | "backward")          (a gradient test's run enters that part)
    worker -> parent   ("ok", outputs, seconds) | ("error", stage, type, summary, traceback, seconds, oom, {"part"})
    parent -> worker   ("runs", model_bytes, [inputs, ...])      (a dynamic model: one compile, every shape)
    worker -> parent   ("stage", "execute"), ("shape", k) before running shape k
    worker -> parent   ("ok", [outputs, ...], seconds, {"compiles": n, "unguarded": {shape, why} or None})
                     | ("error", stage, type, summary, traceback, seconds, oom, {"shape": k or None, "part"})
    parent -> worker   ("close",)

The worker holds nothing of the fuzzer's state: the backend object and, during a run, the compiled
model. Every exception it catches goes back to the parent with its traceback; a fatal signal
(SIGSEGV, SIGABRT, ...) prints the Python stack to the log (faulthandler) and kills the worker, which
the parent sees as the end of the connection. SIGUSR1 prints every thread's stack to the log: the
parent sends it before killing a worker that ran past its time limit.
"""
from __future__ import annotations

import faulthandler
import os
import resource
import signal
import sys
import time
import traceback

from nnfuzz.fuzz.lifeline import die_with_parent
from nnfuzz.native_memory import TRIM_EVERY_S, trim_heap

STATM = "/proc/self/statm"


def _memory_mb():
    """(virtual size, resident size) of this process in MiB, or (None, None) without /proc."""
    try:
        with open(STATM) as f:
            vsz, rss = (int(x) for x in f.read().split()[:2])
    except OSError:
        return None, None
    page = os.sysconf("SC_PAGE_SIZE")
    return vsz * page >> 20, rss * page >> 20


def _load_backend(spec: dict):
    """The backend's class: ``backend_path`` ("module:Class") where given, else the name (registry.py)."""
    from nnfuzz.backends.registry import backend_class

    return backend_class(spec.get("backend_path") or spec["backend"])


def _exc_type(e: BaseException) -> str:
    t = type(e)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def summarize(e: BaseException, limit: int = 400) -> str:
    """``Type: first non-empty line of the message`` (shortened to ``limit`` characters)."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    text = f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _init(conn, spec: dict):
    for p in spec.get("sys_path", []):
        if p not in sys.path:
            sys.path.append(p)
    from nnfuzz.backends.base import BackendUnavailable

    try:
        cls = _load_backend(spec)
        cls.check_available()
    except BackendUnavailable as e:
        conn.send(("unavailable", str(e)))
        return None
    except Exception as e:
        conn.send(("init_error", _exc_type(e), str(e), traceback.format_exc()))
        return None
    try:
        backend, info = make_backend(cls, spec.get("options", {}))
    except Exception as e:
        conn.send(("init_error", _exc_type(e), str(e), traceback.format_exc()))
        return None
    vsz, rss = _memory_mb()
    info["rss_mb"] = rss
    info["rlimit_as_mb"] = None
    extra = spec.get("as_extra_mb")
    on = spec.get("as_limit")
    if on is None:  # CUDA maps address ranges far larger than memory: no limit for GPU backends
        on = info["device"] != "gpu"
    if on and extra and vsz is not None:
        # A backstop under the parent's RSS polling, for allocations too fast to see: an address-space
        # limit well above what the loaded backend maps, so a huge allocation fails (MemoryError)
        # instead of taking the machine's memory.
        limit = (vsz + int(extra)) << 20
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        info["rlimit_as_mb"] = limit >> 20
    conn.send(("ready", info))
    return backend


def make_backend(cls, options: dict):
    """An instance of backend class ``cls`` with ``options``, warmed up, and its facts (the BackendInfo
    fields as a dict, with this process's ``pid``): what a worker does once its class is loaded and
    available (the in-process executor too: fuzz/inprocess.py)."""
    import dataclasses

    from nnfuzz.backends.base import BackendInfo

    backend = cls(**options)
    backend.warm_up()
    return backend, {**dataclasses.asdict(BackendInfo.of(backend)), "pid": os.getpid()}


def _as_arrays(outputs):
    import numpy as np

    if not isinstance(outputs, dict):
        raise TypeError(f"backend.run returned {type(outputs).__name__}, expected a dict of name -> array")
    return {str(k): np.asarray(v) for k, v in outputs.items()}


def _is_oom(e: BaseException) -> bool:
    return isinstance(e, MemoryError) or "std::bad_alloc" in str(e)


def run_backend(backend, model_bytes, inputs, entering=None, at_part=None) -> tuple:
    """Compile ``model_bytes`` on ``backend`` and run it on ``inputs``: the answer to a "run" message,
    ``("ok", outputs, seconds)`` or ``("error", stage, type, summary, traceback, seconds, oom, {"part"})``
    (see the protocol above; fuzz/sandbox.py result_of makes it a RunResult). ``entering("execute")`` is
    called when the compile is done, ``at_part(part)`` when a gradient test's run enters its forward or
    backward (``Backend.entering``). Only an ``Exception`` becomes an error: anything else passes through."""
    answer = run_backend_shapes(backend, model_bytes, [inputs], entering, at_part=at_part)
    return ("ok", answer[1][0], answer[2]) if answer[0] == "ok" else answer[:7] + ({"part": answer[7]["part"]},)


def run_backend_shapes(backend, model_bytes, shapes, entering=None, at_shape=None, at_part=None) -> tuple:
    """Compile ``model_bytes`` once and run it on each of ``shapes`` (input dicts) in turn: the answer to a
    "runs" message (see the protocol above). ``at_shape(k)`` is called before shape k runs, ``at_part(part)``
    as in ``run_backend`` (the backend's ``on_part`` for the run); the compiles counted are the backend's
    (``Backend.compiles``: recompilations included)."""
    seconds, outs = {}, []
    stage, part = "compile", [None]

    def enter(p):
        part[0] = p
        if at_part is not None:
            at_part(p)

    backend.on_part = enter
    try:
        t = time.perf_counter()
        compiled = backend.compile(model_bytes)
        seconds["compile"] = time.perf_counter() - t
        stage = "execute"
        if entering is not None:
            entering(stage)
        t = time.perf_counter()
        for k, inputs in enumerate(shapes):
            if at_shape is not None:
                at_shape(k)
            outs.append(_as_arrays(backend.run(compiled, inputs)))
        seconds["execute"] = time.perf_counter() - t
        counted = {"compiles": int(backend.compiles(compiled)), "unguarded": backend.unguarded_recompile(compiled)}
        del compiled
    except Exception as e:
        return ("error", stage, _exc_type(e), summarize(e), traceback.format_exc(), seconds, _is_oom(e),
                {"shape": len(outs) if stage == "execute" else None, "part": part[0]})
    finally:
        backend.on_part = None
    return ("ok", outs, seconds, counted)


def unsendable(answer: tuple, e: BaseException) -> tuple:
    """(Inside the ``except`` for ``e``.) The error answer for an "ok" ``answer`` whose outputs could not
    be sent back (pickled); nothing of it was sent yet. Any other answer that cannot be sent raises ``e``."""
    if answer[0] != "ok":
        raise e
    return ("error", "execute", _exc_type(e), "outputs could not be sent back: " + summarize(e),
            traceback.format_exc(), answer[2], _is_oom(e), {"shape": None})


def _run(conn, backend, model_bytes, inputs, shapes: bool = False) -> None:
    def at_part(part):
        conn.send(("part", part))

    if shapes:
        answer = run_backend_shapes(backend, model_bytes, inputs, lambda stage: conn.send(("stage", stage)),
                                    lambda k: conn.send(("shape", k)), at_part)
    else:
        answer = run_backend(backend, model_bytes, inputs, lambda stage: conn.send(("stage", stage)), at_part)
    try:
        conn.send(answer)
    except Exception as e:  # an output that cannot be pickled; nothing was written yet
        conn.send(unsendable(answer, e))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    fd, parent_pid, pdeathsig = int(argv[0]), int(argv[1]), argv[2] == "1"
    from multiprocessing.connection import Connection

    faulthandler.enable(all_threads=True)
    if hasattr(faulthandler, "register"):
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    die_with_parent(parent_pid, pdeathsig)  # a hung worker never outlives a killed fuzzer
    conn = Connection(fd)
    try:
        msg = conn.recv()
    except EOFError:
        return 0
    if msg[0] != "init":
        raise RuntimeError(f"worker expected an init message, got {msg[0]!r}")
    backend = _init(conn, msg[1])
    if backend is None:
        return 0
    while True:
        try:
            msg = conn.recv()
        except EOFError:  # the parent closed the connection or died
            return 0
        kind = msg[0]
        if kind in ("run", "runs"):
            _run(conn, backend, msg[1], msg[2], shapes=kind == "runs")
            del msg
            trim_heap(every=TRIM_EVERY_S)  # what the test freed mid-heap (sessions, outputs) goes back
        elif kind == "close":  # skip interpreter teardown (TVM's takes most of a second)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
        else:
            raise RuntimeError(f"worker got an unknown message {kind!r}")


if __name__ == "__main__":
    sys.exit(main())
