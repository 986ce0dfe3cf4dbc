"""The sandbox: faults in the system under test are classified and cost only the worker.

One module-scoped Sandbox over the fault backend (tests/fuzz/fault_backend.py) receives every fault in
turn; after each, the same object must run a normal model again (a fresh worker where the old one died).
"""
import importlib.metadata
import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from fault_backend import fault_model
from nnfuzz.backends.base import BackendUnavailable
from nnfuzz.backends.known import classify
from nnfuzz.errors import ConfigError, NNFuzzError
from nnfuzz.fuzz.sandbox import RunResult, Sandbox
from nnfuzz.verdict import Outcome, Symptom, compare

FAULT = "fault_backend:FaultBackend"
X = np.array([[-1.5, 2.0, -3.0], [4.0, -5.0, 6.5]], np.float32)
REF = {"y": np.maximum(X, 0)}


@pytest.fixture(scope="module")
def sb():
    with Sandbox("fault-cpu", backend_path=FAULT, test_timeout=2.0, memory_limit_mb=300) as s:
        yield s


def run_ok(sb) -> RunResult:
    r = sb.run(fault_model(), {"x": X})
    assert r.status == "ok", (r.error, r.detail)
    assert r.stage == "execute" and r.error == "" and r.signal is None
    np.testing.assert_array_equal(r.outputs["y"], REF["y"])
    return r


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def wait_gone(pid: int, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if _gone(pid):
            return True
        time.sleep(0.02)
    return False


@pytest.mark.slow
def test_start_reports_backend_info(sb):
    info = sb.start()
    assert info["name"] == "fault-cpu" and info["version"] == "1.0-fault"
    assert info["version_id"].startswith("fault+ort")
    assert sb.info == info and sb.pid == info["pid"] != os.getpid()
    r = run_ok(sb)
    assert set(r.seconds) >= {"compile", "execute", "ipc"}
    assert sb.start() == info  # idempotent: same worker


# fault, status, stage, signal, error (regex), worker replaced
CASES = [
    ("segfault", "crash", "execute", signal.SIGSEGV, r"^killed by SIGSEGV$", True),
    ("segfault@compile", "crash", "compile", signal.SIGSEGV, r"^killed by SIGSEGV$", True),
    ("abort", "crash", "execute", signal.SIGABRT, r"^killed by SIGABRT$", True),
    ("abort@compile", "crash", "compile", signal.SIGABRT, r"^killed by SIGABRT$", True),
    ("exit", "crash", "execute", None, r"^worker exited with code 3$", True),
    ("hang", "timeout", "execute", None, r"^timed out after 2s in execute$", True),
    ("spin", "timeout", "compile", None, r"^timed out after 2s in compile$", True),
    ("leak", "crash", "execute", None, r"^memory limit exceeded \(\d+ MiB > 300 MiB\)$", True),
    ("hugealloc", "crash", "compile", None, r"^memory limit exceeded \(", True),
    ("raise", "error", "compile", None, r"^RuntimeError: injected failure$", False),
    ("raise@execute", "error", "execute", None, r"^RuntimeError: injected failure$", False),
    ("unsupported", "error", "compile", None, r"^RuntimeError: \[ONNXRuntimeError\] : 9 : NOT_IMPLEMENTED", False),
    ("unpicklable", "error", "execute", None, r"^outputs could not be sent back: ", False),
]


@pytest.mark.parametrize("fault,status,stage,sig,error,replaced", CASES, ids=[c[0] for c in CASES])
@pytest.mark.slow
def test_fault_is_classified_and_sandbox_recovers(sb, fault, status, stage, sig, error, replaced):
    run_ok(sb)
    pid = sb.pid
    t = time.monotonic()
    r = sb.run(fault_model(fault), {"x": X})
    took = time.monotonic() - t
    assert (r.status, r.stage, r.signal) == (status, stage, sig), (r.error, r.detail)
    assert r.outputs is None
    assert __import__("re").search(error, r.error), r.error
    assert "\n" not in r.error
    if replaced:
        assert sb.pid is None and wait_gone(pid)
    else:
        assert sb.pid == pid
    if status == "timeout":
        assert 2.0 <= took < 4.0
    after = run_ok(sb)
    assert (sb.pid != pid) == replaced
    if replaced:
        assert "start" in after.seconds


@pytest.mark.slow
def test_crash_detail_has_the_python_stack(sb):
    r = sb.run(fault_model("segfault"), {"x": X})
    assert r.status == "crash"
    assert "Segmentation fault" in r.detail and "_inject" in r.detail  # faulthandler output
    run_ok(sb)


@pytest.mark.slow
def test_timeout_detail_has_every_thread_stack(sb):
    r = sb.run(fault_model("hang"), {"x": X}, timeout=0.5)
    assert (r.status, r.error) == ("timeout", "timed out after 0.5s in execute")
    assert "most recent call first" in r.detail and "_hang" in r.detail


@pytest.mark.slow
def test_error_detail_is_the_traceback_and_the_worker_survives(sb):
    run_ok(sb)
    pid = sb.pid
    r = sb.run(fault_model("raise@execute"), {"x": X})
    assert r.status == "error" and r.exc_type == "RuntimeError"
    assert r.detail.startswith("Traceback") and "injected failure" in r.detail and "_inject" in r.detail
    assert "execute" in r.seconds or "compile" in r.seconds
    assert sb.pid == pid


@pytest.mark.slow
def test_detail_holds_only_this_runs_output(sb):
    r = sb.run(fault_model("print"), {"x": X})
    assert r.status == "ok"
    r = sb.run(fault_model("raise"), {"x": X})
    assert "hello" not in r.detail
    r = sb.run(fault_model("print@execute"), {"x": X})
    assert r.status == "ok"
    r = sb.run(fault_model("abort"), {"x": X})
    assert r.status == "crash" and "hello" not in r.detail


@pytest.mark.slow
def test_unsupported_error_is_recognized_by_the_known_table(sb):
    r = sb.run(fault_model("unsupported"), {"x": X})
    assert r.status == "error"
    known = classify("ort", r.error)
    assert known is not None and known.kind == "unsupported"


@pytest.mark.slow
def test_wrong_values_and_nan_come_back_for_the_oracle(sb):
    r = sb.run(fault_model("wrong"), {"x": X})
    assert r.status == "ok"
    np.testing.assert_array_equal(r.outputs["y"], REF["y"] + 1)
    v = compare(REF, r.outputs)
    assert v.outcome is Outcome.BUG and v.symptom is Symptom.inconsistency
    r = sb.run(fault_model("nan"), {"x": X})
    assert r.status == "ok" and np.isnan(r.outputs["y"]).all()
    assert compare(REF, r.outputs).symptom is Symptom.inconsistency


@pytest.mark.slow
def test_timeout_kills_the_whole_process_group(sb, tmp_path):
    pidfile = tmp_path / "child.pid"
    r = sb.run(fault_model("childhang", pidfile=pidfile), {"x": X}, timeout=1.0)
    assert (r.status, r.stage) == ("timeout", "compile")
    child = int(pidfile.read_text())
    assert wait_gone(child), "the worker's child survived the kill"
    run_ok(sb)


@pytest.mark.slow
def test_worker_killed_between_runs_is_replaced(sb):
    run_ok(sb)
    pid = sb.pid
    os.kill(pid, signal.SIGKILL)
    end = time.monotonic() + 5
    while sb.pid is not None and time.monotonic() < end:  # waitable once all its threads are gone
        time.sleep(0.01)
    r = run_ok(sb)
    assert sb.pid != pid and "start" in r.seconds


@pytest.mark.slow
def test_a_killed_workers_temporary_files_go_with_it(sb):
    """TF's autograph leaves a file per traced function in the temporary directory of a worker killed
    mid-campaign (hundreds in /tmp after a few campaigns): a worker's TMPDIR is its scratch directory,
    removed when it is reaped."""
    run_ok(sb)
    pid = sb.pid
    env = dict(e.split("=", 1) for e in Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in e)
    tmp = Path(env["TMPDIR"])
    assert tmp == Path(env["NNFUZZ_WORKER_SCRATCH"]) and tmp.is_dir()
    (tmp / "__autograph_generated_file_x.py").write_text("# as TF writes one")
    os.kill(pid, signal.SIGKILL)
    run_ok(sb)  # (a fresh worker; the dead one reaped)
    assert sb.pid != pid and not tmp.exists()


@pytest.mark.slow
def test_close_stops_the_worker_and_run_restarts_it():
    s = Sandbox("fault-cpu", backend_path=FAULT, memory_limit_mb=300)
    assert s.pid is None  # lazy
    r = run_ok(s)
    assert "start" in r.seconds
    pid = s.pid
    s.close()
    assert s.pid is None and wait_gone(pid)
    run_ok(s)
    with s:
        pid = s.pid
    assert wait_gone(pid)


@pytest.mark.slow
def test_close_kills_what_the_worker_left_running(tmp_path):
    pidfile = tmp_path / "child.pid"
    with Sandbox("fault-cpu", backend_path=FAULT, memory_limit_mb=300) as s:
        assert s.run(fault_model("daemonchild", pidfile=pidfile), {"x": X}).status == "ok"
        child = int(pidfile.read_text())
        assert not _gone(child)
    assert wait_gone(child)


@pytest.mark.slow
def test_interrupted_run_drops_the_busy_worker(sb, monkeypatch):
    from nnfuzz.fuzz import sandbox as mod

    run_ok(sb)
    pid = sb.pid

    def interrupted(self, timeout):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(mod.WorkerHandle, "poll", interrupted)
        with pytest.raises(KeyboardInterrupt):
            sb.run(fault_model("hang"), {"x": X})
    assert sb.pid is None and wait_gone(pid)  # its late answer can never be read as the next run's
    run_ok(sb)


@pytest.mark.slow
def test_a_stop_request_abandons_the_run_and_its_worker(sb):
    import threading

    from nnfuzz.fuzz.stopping import Stopped, StopRequest

    run_ok(sb)
    pid = sb.pid
    sb.stop = stop = StopRequest()
    try:
        threading.Timer(0.3, stop.request).start()  # a stop signal while the worker hangs in the model
        with pytest.raises(Stopped):
            sb.run(fault_model("hang"), {"x": X}, timeout=120)
        assert sb.pid is None and wait_gone(pid)
        with pytest.raises(Stopped):
            sb.start()  # no new worker once stopped
        assert sb.pid is None
    finally:
        sb.stop = None
    run_ok(sb)


@pytest.mark.slow
def test_address_space_backstop_is_on_for_cpu_backends_only(sb):
    info = sb.start()
    assert info["rlimit_as_mb"] > 2 * 300 + 2048
    with Sandbox("fault-gpu", backend_path="fault_backend:GpuFaultBackend", memory_limit_mb=300) as s:
        assert s.info["rlimit_as_mb"] is None
    with Sandbox("fault-cpu", backend_path=FAULT, memory_limit_mb=300, address_space_limit=False) as s:
        assert s.info["rlimit_as_mb"] is None
        run_ok(s)


@pytest.mark.slow
def test_start_failures_raise_with_the_workers_message():
    with pytest.raises(BackendUnavailable, match="frobnicator"):
        Sandbox("unavailable-cpu", backend_path="fault_backend:UnavailableBackend").start()
    with pytest.raises(ConfigError, match="bad_option"):
        Sandbox("fault-cpu", {"bad_option": True}, backend_path=FAULT).start()
    with pytest.raises(NNFuzzError, match="ValueError: cannot open the frobnicator"):
        Sandbox("raise-cpu", backend_path="fault_backend:RaiseAtStartBackend").start()
    with pytest.raises(NNFuzzError, match=r"(?s)died while starting \(killed by SIGABRT\).*starting, then aborting"):
        Sandbox("abort-cpu", backend_path="fault_backend:AbortAtStartBackend").start()
    with pytest.raises(ConfigError, match="known backends"):
        Sandbox("nope-cpu").start()
    with pytest.raises(ConfigError, match="memory_limit_mb=10 "):
        Sandbox("fault-cpu", backend_path=FAULT, memory_limit_mb=10).start()


@pytest.mark.slow
def test_worker_dies_with_its_parent(tmp_path):
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from nnfuzz.fuzz.sandbox import Sandbox
        s = Sandbox("fault-cpu", backend_path={FAULT!r}, memory_limit_mb=300)
        print(s.start()["pid"], flush=True)
        os._exit(0)  # no close(), no atexit
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert wait_gone(int(out.stdout.strip()))


# -- real backends ----------------------------------------------------------------------------------


def add_relu_model() -> bytes:
    from onnx import TensorProto, helper

    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])],
                          "add_relu", [a, b], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def unsupported_model() -> bytes:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    g = helper.make_graph([helper.make_node("Celu", ["x"], ["y"], alpha=1.0)], "celu", [x], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


AB = {"a": X, "b": np.full((2, 3), 0.5, np.float32)}


def needs(module: str) -> None:
    """Skip unless ``module`` is installed, without importing it here (TVM takes seconds)."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")


@pytest.mark.parametrize("name,module,dist", [("ort-cpu", "onnxruntime", "onnxruntime"),
                                              ("tvm-cpu", "tvm", "apache-tvm")])
@pytest.mark.slow
def test_real_backend_in_sandbox(name, module, dist):
    needs(module)
    with Sandbox(name) as s:
        info = s.info
        assert info["name"] == name and info["version"] == importlib.metadata.version(dist)
        assert info["version_id"]
        r = s.run(add_relu_model(), AB)
        assert r.status == "ok", (r.error, r.detail)
        np.testing.assert_allclose(r.outputs["y"], np.maximum(AB["a"] + AB["b"], 0), rtol=1e-6)
        assert r.seconds["compile"] > 0 and r.seconds["execute"] > 0
        pid = s.pid
        r = s.run(b"this is not an onnx model", AB)
        assert (r.status, r.stage) == ("error", "compile") and r.error and "Traceback" in r.detail
        assert s.pid == pid
        assert s.run(add_relu_model(), AB).status == "ok"


@pytest.mark.slow
def test_tvm_unsupported_op_is_an_error_the_known_table_recognizes():
    needs("tvm")
    with Sandbox("tvm-cpu") as s:
        r = s.run(unsupported_model(), {"x": X})
    assert (r.status, r.stage, r.exc_type) == ("error", "compile", "tvm.error.OpNotImplemented")
    assert classify("tvm", r.error).kind == "unsupported"


@pytest.mark.slow
def test_backend_options_reach_the_worker():
    needs("onnxruntime")
    with pytest.raises(ConfigError, match="opt_level"):
        Sandbox("ort-cpu", {"opt_level": "bogus"}).start()
    with Sandbox("ort-cpu", {"opt_level": "disable"}) as s:
        assert s.run(add_relu_model(), AB).status == "ok"
