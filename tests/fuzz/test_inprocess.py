"""The in-process executor (nnfuzz/fuzz/inprocess.py, ``fuzz.executor=inprocess``): its sandbox gives the
RunResults a worker's sandbox gives (fuzz/sandbox.py; test_sandbox.py injects the same faults into real
workers), including the crashes, timeouts and stop signals that only a worker process shows, here asked
for by the test tier's fake backends (tests/fuzz/fake_backends.py)."""
import contextlib
import math
import signal

import numpy as np
import pytest
from fault_backend import fault_model

from nnfuzz.backends.base import BackendUnavailable
from nnfuzz.errors import ConfigError, ModelBuildError, NNFuzzError
from nnfuzz.fuzz import inprocess
from nnfuzz.fuzz.inprocess import InProcessExecutor, InProcessSandbox
from nnfuzz.fuzz.stopping import Stopped, StopRequest

FAKE = "fake_backends:FakeBackend"
X = {"x": np.array([[-1, 2, -3], [4, -5, 6]], np.float32)}
RELU = np.maximum(X["x"], 0)  # what fault_model() computes


def _sandbox(always=None, **kw) -> InProcessSandbox:
    return InProcessSandbox("fake-cpu", {"always": always} if always else {}, backend_path=FAKE, **kw)


def test_a_clean_run_gives_the_outputs_and_the_backends_facts():
    sb = _sandbox(test_timeout=5)
    info = sb.start()
    assert info["name"] == "fake-cpu" and info["version"] == "1.0-fake" and sb.format == "onnx"
    assert sb.backend_info.engine == "ort" and sb.pid is None  # no worker process
    for _ in range(2):
        r = sb.run(fault_model(), X)
        assert r.ok and r.stage == "execute" and np.array_equal(r.outputs["y"], RELU)
        assert {"compile", "execute", "ipc"} <= set(r.seconds)
    assert sb.workers_started == 1  # the backend is made once and kept, as a worker is


@pytest.mark.parametrize("always, status, stage, error", [
    ("crash", "crash", "execute", "killed by SIGSEGV"),
    ("crash@compile", "crash", "compile", "killed by SIGSEGV"),
    ("hang", "timeout", "execute", "timed out after 1s in execute"),
    ("slow", "timeout", "compile", "timed out after 1s in compile"),  # 2 simulated seconds
    ("raise", "error", "compile", "RuntimeError: injected failure"),
    ("unsupported", "error", "compile", "RuntimeError: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED"),
    ("oom", "crash", "execute", "memory limit exceeded (MemoryError: fake backend: cannot allocate"),
    ("unpicklable", "error", "execute", "outputs could not be sent back: "),
])
def test_faults_end_the_run_as_a_workers_sandbox_reports_them(always, status, stage, error):
    sb = _sandbox(always, test_timeout=1.0)
    r = sb.run(fault_model(), X)
    assert (r.status, r.stage, r.outputs) == (status, stage, None) and r.error.startswith(error), r
    assert r.signal == (signal.SIGSEGV if always.startswith("crash") else None)
    assert "Traceback" in r.detail
    # a run that a worker would not survive makes the backend anew for the next run, as a new worker
    sb.run(fault_model(), X)
    assert sb.workers_started == (1 if status == "error" else 2)


def test_a_slow_run_ends_given_the_time_it_takes():
    sb = _sandbox(None)
    sb.options = {"always": "slow", "slow_s": 2.5}
    assert sb.run(fault_model(), X, timeout=2.0).status == "timeout"
    r = sb.run(fault_model(), X, timeout=3.0)
    assert r.ok and np.array_equal(r.outputs["y"], RELU)
    inprocess.take(math.inf)  # outside a run: no time limit to pass


def test_nnfuzz_failing_to_build_a_model_is_its_own_error():
    with pytest.raises(ModelBuildError, match="building the model failed: injected"):
        _sandbox("nnfuzzbuild").run(fault_model(), X)


def test_a_stop_signal_during_a_run_ends_it_with_stopped():
    stop = StopRequest()
    sb = _sandbox("stop", stop=stop)
    with pytest.raises(Stopped, match="SIGTERM"):
        sb.run(fault_model(), X)
    assert stop.name == "SIGTERM"  # the campaign's stop request has it, as from a signal handler
    fresh = _sandbox(stop=stop)
    with pytest.raises(Stopped):  # once stopped, nothing more runs or starts
        fresh.run(fault_model(), X)
    assert fresh.workers_started == 0


def test_start_fails_as_a_sandbox_start_does():
    with pytest.raises(ConfigError, match="always='bogus'"):
        _sandbox("bogus").start()
    with pytest.raises(BackendUnavailable, match="pip install frob"):
        InProcessSandbox("unavailable-cpu", backend_path="fault_backend:UnavailableBackend").start()
    with pytest.raises(NNFuzzError, match="failed while starting: ValueError: cannot open the frobnicator"):
        InProcessSandbox("raise-at-start-cpu", backend_path="fault_backend:RaiseAtStartBackend").start()


def test_fuzz_executor_inprocess_is_a_checked_choice(capsys):
    from nnfuzz.cli import main
    from nnfuzz.commands.fuzz import campaign_config
    from nnfuzz.config import load_config
    from nnfuzz.fuzz.executors import make_executor

    cc = campaign_config(load_config(["fuzz.executor=inprocess", "fuzz.test_timeout=3"]))
    with contextlib.ExitStack() as stack:
        executor = make_executor(cc, stack)
    assert isinstance(executor, InProcessExecutor) and executor.workers(cc) == 1  # workers=auto: one lane
    sb = executor.sandbox(cc, "fake-cpu", {}, FAKE, None, {})
    assert isinstance(sb, InProcessSandbox) and sb.test_timeout == 3.0
    assert main(["fuzz", "fuzz.executor=nowhere", "time=1s"]) == 2
    assert "fuzz.executor='nowhere'" in capsys.readouterr().err
