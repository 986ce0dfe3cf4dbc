"""Run a test's body in a long-lived sandbox worker (nnfuzz/fuzz/sandbox.py), so that a native crash of
the system under test (a segfault, glibc's abort on a corrupt heap) fails that one test, with the signal
and the system's last message in its failure text, instead of killing the whole pytest run.

    from contained import contained  # noqa: F401 - the fixture

    @pytest.mark.slow
    def test_x(contained):
        contained(check_x, arg)      # check_x(arg) runs in the worker; its return value comes back

One worker per test module (the fixture is module-scoped): a system's import (TF: 2-3 s) is paid once per
module, and the call after a crash starts a fresh worker. The worker is nnfuzz's own sandbox worker
running ``CallBackend``, whose "model" is a pickled call: the function must be importable by name (a
module-level function of a test module or helper) and its arguments and result picklable. What it raises
comes back as the test's failure with the worker's traceback (pytest's assertion rewriting does not reach
the worker: give asserts a message); pytest.skip / pytest.xfail inside it skip / xfail the test. Tests
that use it start a process, so they are marked slow.
"""
from __future__ import annotations

import pickle
import platform

import numpy as np
import pytest

from nnfuzz.backends.base import Backend
from nnfuzz.fuzz.sandbox import Sandbox

RESULT, OUTCOME = "result", "outcome"   # the names CallBackend.run returns a value or a pytest outcome under
TIMEOUT_S = 300.0                        # one call's bound (the first call also imports the system)
MEMORY_LIMIT_MB = 8192                   # the worker's resident memory bound (TF + torch take ~1.5 GiB)
_OUTCOMES = {"skip": pytest.skip.Exception, "xfail": pytest.xfail.Exception, "fail": pytest.fail.Exception}


def _packed(value) -> np.ndarray:
    return np.frombuffer(pickle.dumps(value), np.uint8)


class CallBackend(Backend):
    """The worker's side: ``compile`` unpickles ``(function, args, kwargs)``, ``run`` calls it."""

    name = "contained"
    engine = "python"
    formats = ("call",)

    @property
    def version(self) -> str:
        return platform.python_version()

    def compile(self, payload: bytes):
        return pickle.loads(payload)

    def run(self, call, inputs):
        fn, args, kwargs = call
        try:
            result = fn(*args, **kwargs)
        except tuple(_OUTCOMES.values()) as e:  # BaseExceptions the worker would die of: sent back as data
            kind = next(k for k, t in _OUTCOMES.items() if isinstance(e, t))
            return {OUTCOME: _packed((kind, str(e.msg)))}
        return {RESULT: _packed(result)}


def last_message(output: str) -> str:
    """The last line the process printed before faulthandler's report of a fatal signal (glibc's "double
    free or corruption (!prev)", a system's own check), or its last line when there is no such report."""
    lines = [ln.strip() for ln in output.splitlines()]
    end = next((i for i, ln in enumerate(lines) if ln.startswith("Fatal Python error")), len(lines))
    return next((ln for ln in reversed(lines[:end]) if ln), "(nothing)")


class Contained:
    """Calls functions in one sandbox worker, restarted after a crash; see the module docstring."""

    def __init__(self, timeout: float = TIMEOUT_S, memory_limit_mb: int = MEMORY_LIMIT_MB):
        # address space unlimited: the first call imports the system, after the limit would be measured
        self.sandbox = Sandbox("contained", backend_path=f"{__name__}:CallBackend", test_timeout=timeout,
                               memory_limit_mb=memory_limit_mb, address_space_limit=False)

    def __call__(self, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` in the worker: its return value, or the test fails (or skips) saying why."""
        what = f"{fn.__module__}.{fn.__qualname__}"
        r = self.sandbox.run(pickle.dumps((fn, args, kwargs)), {})
        if r.ok:
            if OUTCOME in r.outputs:
                kind, msg = pickle.loads(r.outputs[OUTCOME].tobytes())
                raise _OUTCOMES[kind](msg)
            return pickle.loads(r.outputs[RESULT].tobytes())
        if r.status == "error":
            pytest.fail(f"{what} raised in the contained worker: {r.error}\n{r.detail}", pytrace=False)
        how = f"{r.error}, signal {r.signal}" if r.signal else r.error
        pytest.fail(f"{what} {'timed out' if r.status == 'timeout' else 'crashed'} in the contained worker "
                    f"({how}, stage {r.stage}); the system's last message: {last_message(r.detail)}\n"
                    f"--- the worker's output (tail) ---\n{r.detail}", pytrace=False)

    def close(self) -> None:
        self.sandbox.close()


@pytest.fixture(scope="module")
def contained():
    """A ``Contained`` runner shared by the tests of one module."""
    runner = Contained()
    yield runner
    runner.close()
