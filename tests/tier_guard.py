"""The fast tier's guard: a test that starts a process (a sandbox worker, a subprocess, a multiprocessing
child) or compiles with torch.compile or TVM must be marked ``slow`` (the README's tiers: ``-m "not
slow"`` is the development loop). An unmarked test that does so fails, naming what it started, so the
fast tier cannot grow slow by accident.

It watches the calls every such start goes through: ``subprocess.Popen`` (the sandbox, pip, nnfuzz's CLI
in a subprocess), ``multiprocessing``'s ``Process.start`` (producers), ``torch.compile`` and, once TVM is
imported, ``tvm.compile``.
"""
from __future__ import annotations

import json
import multiprocessing.process
import os
import subprocess
import sys

import pytest

_started: list = []
AUDIT = os.environ.get("NNFUZZ_TIER_AUDIT")  # a file: record each test's starts and seconds, fail none
_seconds: dict = {}
STARTERS = {"nnfuzz", "pip", "pip3", "chromium", "chrome", "node"}  # besides Python interpreters


def _watch(owner, attr: str, what):
    real = getattr(owner, attr)
    if getattr(real, "_tier_guard", False):
        return

    def watched(*args, **kwargs):
        started = what(*args, **kwargs)
        if started is not None:
            _started.append(started)
        return real(*args, **kwargs)

    watched._tier_guard = True
    watched.__wrapped__ = real
    setattr(owner, attr, watched)


def _argv(self, args, *rest, **kw):
    """A Python process (a sandbox worker, nnfuzz's CLI, pip, a script) or a browser; a library's quick
    look at the machine (``uname -p``, ``ldconfig -p``, ``g++ -dumpmachine``) is none of the test's."""
    argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    prog = os.path.basename(str(argv[0]).split()[0]) if argv else ""
    if not (prog.startswith("python") or prog in STARTERS or str(argv[0]) == sys.executable):
        return None
    return f"a process: {' '.join(map(str, argv))[:160]}"


def _child(self) -> str:
    return f"a multiprocessing child: {self.name}"


def _compile(label):
    return lambda *a, **k: f"a {label} compile"


_STARTED = pytest.StashKey[list]()

_watch(subprocess.Popen, "__init__", _argv)
_watch(multiprocessing.process.BaseProcess, "start", _child)


def _watch_compilers() -> None:
    torch = sys.modules.get("torch")
    if torch is not None:
        _watch(torch, "compile", _compile("torch.compile"))
    tvm = sys.modules.get("tvm")
    if tvm is not None and hasattr(tvm, "compile"):
        _watch(tvm, "compile", _compile("TVM"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    _watch_compilers()
    _started.clear()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _watch_compilers()
    outcome = yield
    started, _started[:] = list(_started), []
    item.stash[_STARTED] = started
    if AUDIT or not started or item.get_closest_marker("slow") is not None:
        return
    if outcome.excinfo is not None:  # the test failed already: that failure is the one to show
        return
    shown = "; ".join(dict.fromkeys(started))
    outcome.force_exception(pytest.fail.Exception(
        f"{item.nodeid} is not marked slow but started {shown}. Mark it @pytest.mark.slow (the README's "
        f"tiers: -m 'not slow' runs no processes or compiles), or test the logic in-process "
        f"(fuzz.executor=inprocess, tests/fuzz/fake_backends.py)."))


def pytest_runtest_logreport(report):
    """(NNFUZZ_TIER_AUDIT) one JSON line per test: its id, whether it is marked slow, its seconds (setup,
    call and teardown) and what it started."""
    if not AUDIT:
        return
    _seconds[report.nodeid] = _seconds.get(report.nodeid, 0.0) + report.duration
    if report.when == "teardown":
        slow = "slow" in report.keywords
        started = getattr(report, "_tier_started", None)
        with open(AUDIT, "a") as f:
            f.write(json.dumps({"id": report.nodeid, "slow": slow, "s": round(_seconds.pop(report.nodeid), 3),
                                "started": started}) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if AUDIT and call.when == "teardown":
        outcome.get_result()._tier_started = sorted(set(item.stash.get(_STARTED, [])))
