"""A test-only backend that misbehaves on request, to exercise the sandbox.

The fault comes with the model: ``fault_model("segfault@compile")`` builds a tiny ONNX model (y = Relu(x))
whose metadata says which fault to inject and where, so one worker can receive different faults across
tests. Without a fault (or for ``wrong``/``nan``) the model runs on onnxruntime in the worker.

Faults (``name`` or ``name@compile`` / ``name@execute``; the default stage is given in FAULTS):
segfault, abort, exit (os._exit(3)), hang (sleep), spin (busy loop holding the GIL), childhang (start a
``sleep`` child, write its pid to metadata ``pidfile``, then hang), daemonchild (the same child, then
succeed), leak (allocate and touch 32 MiB
chunks, slowly, up to metadata ``leak_mb``), hugealloc (one 64 GiB allocation), raise (RuntimeError),
unsupported (an ORT-style NOT_IMPLEMENTED error), nnfuzzbuild (nnfuzz's own model building fails in the
worker: ModelBuildError), slow (sleep metadata ``slow_s`` seconds, default 2, then succeed), wrong (outputs + 1), nan (outputs all NaN),
unpicklable (an output that cannot be sent back), print (write to stdout and stderr, then succeed),
killparent (SIGKILL the worker's parent: a Ray actor dies with its test in flight), rendezvous (wait until
two workers compiled at once: each leaves its pid in the folder metadata ``meet``; alone for 60 s: raise).
Backend option ``once`` (a marker file): ``always`` hits only the campaign's first model (the worker
that creates the marker), the others run clean.
"""
from __future__ import annotations

import ctypes
import os
import subprocess
import time

import numpy as np

from nnfuzz.backends.base import Backend, BackendUnavailable
from nnfuzz.errors import ConfigError

FAULTS = {
    "segfault": "execute", "abort": "execute", "exit": "execute", "hang": "execute", "spin": "compile",
    "childhang": "compile", "leak": "execute", "hugealloc": "compile", "raise": "compile",
    "unsupported": "compile", "wrong": "execute", "nan": "execute", "unpicklable": "execute",
    "print": "compile", "daemonchild": "compile", "killparent": "compile", "rendezvous": "compile",
    "nnfuzzbuild": "compile", "slow": "compile",
}
EXECUTE_ONLY = {"wrong", "nan", "unpicklable"}
UNSUPPORTED_TEXT = ("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for "
                    "FaultOp(1) node with name 'fault'")


def fault_model(fault: str | None = None, shape=(2, 3), **meta) -> bytes:
    """Bytes of an ONNX model y = Relu(x) (float32 ``shape``) carrying ``fault`` and ``meta`` as metadata."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "fault", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    props = dict(meta, fault=fault) if fault else dict(meta)
    onnx.helper.set_model_props(model, {k: str(v) for k, v in props.items()})
    return model.SerializeToString()


def _hang():
    while True:
        time.sleep(3600)


def _inject(fault: str, meta: dict) -> None:
    if fault == "segfault":
        ctypes.string_at(0)
    elif fault == "abort":
        os.abort()
    elif fault == "exit":
        os._exit(3)
    elif fault == "hang":
        _hang()
    elif fault == "spin":
        n = 0
        while True:
            n += 1
    elif fault == "childhang":
        child = subprocess.Popen(["sleep", "300"])
        with open(meta["pidfile"], "w") as f:
            f.write(str(child.pid))
        _hang()
    elif fault == "daemonchild":
        child = subprocess.Popen(["sleep", "300"])
        with open(meta["pidfile"], "w") as f:
            f.write(str(child.pid))
    elif fault == "leak":
        held, chunk = [], 32 << 20
        for _ in range(int(meta.get("leak_mb", 2048)) // 32):
            held.append(np.ones(chunk, dtype=np.uint8))  # touched, so resident
            time.sleep(0.005)
        _hang()
    elif fault == "hugealloc":
        np.ones(64 << 30, dtype=np.uint8)
    elif fault == "raise":
        raise RuntimeError("injected failure")
    elif fault == "unsupported":
        raise RuntimeError(UNSUPPORTED_TEXT)
    elif fault == "slow":
        time.sleep(float(meta.get("slow_s", 2.0)))
    elif fault == "nnfuzzbuild":
        from nnfuzz.errors import ModelBuildError

        raise ModelBuildError("building the model failed: injected")
    elif fault == "killparent":
        os.kill(os.getppid(), 9)
        _hang()
    elif fault == "rendezvous":
        os.makedirs(meta["meet"], exist_ok=True)
        open(os.path.join(meta["meet"], str(os.getpid())), "w").close()
        end = time.monotonic() + 60
        while len(os.listdir(meta["meet"])) < 2:
            if time.monotonic() > end:
                raise RuntimeError("rendezvous: no other worker compiled meanwhile")
            time.sleep(0.05)
    elif fault == "print":
        print("fault backend says hello on stdout", flush=True)
        os.write(2, b"fault backend says hello on stderr\n")
    else:
        raise ConfigError(f"unknown fault {fault!r}; valid: {sorted(FAULTS)}")


class FaultBackend(Backend):
    name = "fault-cpu"
    engine = "ort"  # runs ONNX Runtime underneath and speaks its error dialect
    device = "cpu"

    def __init__(self, bad_option: bool = False, always: str | None = None, once: str | None = None, **options):
        """``always``: a fault applied to every model that carries none (campaign-level tests); with
        ``once`` (a marker file's path) only to the first such model of all workers. Other options are
        the faults' metadata (``meet``)."""
        super().__init__(bad_option=bad_option, always=always, once=once, **options)
        self.once, self.extra = once, {k: str(v) for k, v in options.items()}
        if bad_option:
            raise ConfigError("backend.bad_option=True; valid choices: [False]")
        if always is not None and always.partition("@")[0] not in FAULTS:
            raise ConfigError(f"backend.always={always!r}; valid: {sorted(FAULTS)}")
        self.always = always
        import onnxruntime as ort

        self._ort = ort

    @property
    def version(self) -> str:
        return "1.0-fault"

    @property
    def version_id(self) -> str:
        return f"fault+ort{self._ort.__version__}"

    def compile(self, model_bytes: bytes):
        import onnx

        model = onnx.load_model_from_string(model_bytes)
        meta = {p.key: p.value for p in model.metadata_props}
        fault, stage = None, None
        if "fault" not in meta and self.always and self._first():
            meta = {**self.extra, **meta, "fault": self.always}
        if "fault" in meta:
            fault, _, stage = meta["fault"].partition("@")
            stage = stage or FAULTS.get(fault, "compile")
        if fault and stage == "compile" and fault not in EXECUTE_ONLY:
            _inject(fault, meta)
        sess = self._ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
        return sess, fault, stage, meta

    def _first(self) -> bool:
        """Whether ``always`` applies to this model: always, or with ``once`` to the first one only."""
        if self.once is None:
            return True
        try:
            os.close(os.open(self.once, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return True
        except FileExistsError:
            return False

    def run(self, compiled, inputs):
        sess, fault, stage, meta = compiled
        if fault and stage == "execute" and fault not in EXECUTE_ONLY:
            _inject(fault, meta)
        names = [o.name for o in sess.get_outputs()]
        wanted = {i.name for i in sess.get_inputs()}
        outs = dict(zip(names, sess.run(names, {k: v for k, v in inputs.items() if k in wanted})))
        if fault == "wrong":
            outs = {k: v + 1 for k, v in outs.items()}
        elif fault == "nan":
            outs = {k: np.full_like(v, np.nan) for k, v in outs.items()}
        elif fault == "unpicklable":
            outs = {k: (lambda v=v: v) for k, v in outs.items()}
        return outs


class RewriteWrongBackend(FaultBackend):
    """Right on every model except one holding a local function of the metamorphic oracle's rewrite
    domain, where its outputs are off by one: a bug only the metamorphic oracle can see."""

    def compile(self, model_bytes: bytes):
        import onnx

        model = onnx.load_model_from_string(model_bytes)
        rewritten = any(o.domain == "nnfuzz.rewrite" for o in model.opset_import)
        sess, fault, stage, meta = super().compile(model_bytes)
        return sess, "wrong" if rewritten else fault, stage, meta


class NoFunctionsBackend(FaultBackend):
    """Says, as ORT does for an op it lacks, that it cannot run a model with local functions."""

    def compile(self, model_bytes: bytes):
        import onnx

        if onnx.load_model_from_string(model_bytes).functions:
            raise RuntimeError(UNSUPPORTED_TEXT)
        return super().compile(model_bytes)


class InvalidFaultBackend(FaultBackend):
    """Checks each model with the full ONNX checker and, on an invalid one, does ``on_invalid``:
    "segfault", "reject" (a clean ValueError) or "accept-wrong-type" (accepts it and returns every
    declared output as float64 zeros of shape [1], contradicting the types the model declares)."""

    def __init__(self, on_invalid: str = "segfault", **options):
        super().__init__(**options)
        self.on_invalid = on_invalid

    def compile(self, model_bytes: bytes):
        import onnx

        model = onnx.load_model_from_string(model_bytes)
        try:
            onnx.checker.check_model(model, full_check=True)
        except Exception as e:  # noqa: BLE001 - any checker complaint: the model is invalid
            if self.on_invalid == "segfault":
                ctypes.string_at(0)
            if self.on_invalid == "reject":
                raise ValueError(f"invalid model: {e}") from None
            return "wrong-type", [o.name for o in model.graph.output]
        return super().compile(model_bytes)

    def run(self, compiled, inputs):
        if compiled[0] == "wrong-type":
            return {name: np.zeros((1,), dtype=np.float64) for name in compiled[1]}
        return super().run(compiled, inputs)


class GpuFaultBackend(FaultBackend):
    name = "fault-gpu"
    device = "gpu"


class UnavailableBackend(FaultBackend):
    name = "unavailable-cpu"

    @classmethod
    def check_available(cls) -> None:
        raise BackendUnavailable("unavailable-cpu needs the frobnicator; install it with `pip install frob`")


class AbortAtStartBackend(FaultBackend):
    name = "abort-at-start-cpu"

    def __init__(self, **options):
        print("starting, then aborting", flush=True)
        os.abort()


class RaiseAtStartBackend(FaultBackend):
    name = "raise-at-start-cpu"

    def __init__(self, **options):
        raise ValueError("cannot open the frobnicator")
