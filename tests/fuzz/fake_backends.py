"""Test-tier backends for the in-process executor (``fuzz.executor=inprocess``, nnfuzz/fuzz/inprocess.py):
they compute in numpy, start in no time, and fail on request, including the failures only a worker
process shows (a death by signal, a hang, a stop signal during a run), so that campaign logic is tested
in milliseconds. They run in the test's process: no ONNX Runtime, no native code of a system. (In a
worker process, fuzz.executor=local, the simulated faults differ: hang and slow take no time there.)

``FakeBackend`` takes ONNX models and computes them with ONNX's own numpy reference evaluator;
``FakeGirBackend`` takes nnfuzz graphs (the ``gir`` format) and computes them with nnfuzz's numpy
reference (nnfuzz/reference/), so a campaign for it exports no ONNX at all.

Backend option ``always`` names a fault applied to every model (``name`` or ``name@compile`` /
``name@execute``; the default stage is in FAULTS); ``after=N`` spares this backend's first N models;
``once=KEY`` limits the fault to the first model of all backends given that KEY (the lanes of one
campaign). Faults: wrong (outputs + 1), nan (NaN outputs), f32 (float64 outputs rounded to float32), crash (the worker dies by SIGSEGV: a crash
with its signal), hang (past any time limit: a timeout), slow (takes ``slow_s`` simulated seconds,
default 2, then succeeds), raise (RuntimeError), unsupported (ONNX Runtime's NOT_IMPLEMENTED error),
oom (MemoryError: a memory crash), nnfuzzbuild (nnfuzz's own model building fails: ModelBuildError),
unpicklable (an output that cannot be sent back), stop (a SIGTERM arrives during the run). Option
``lacks`` (ONNX op types) makes every model holding one of them unsupported, as a missing kernel does.
Option ``meet=KEY`` makes each compile wait (a second at most) until ``parties`` runs of backends
given that KEY are compiling at once: lanes mid-test together (``met(KEY)`` counts the runs that met).
"""
from __future__ import annotations

import signal
import threading
import time

import numpy as np

from nnfuzz.backends.base import Backend
from nnfuzz.errors import ConfigError
from nnfuzz.fuzz import inprocess

FAULTS = {"wrong": "execute", "nan": "execute", "f32": "execute", "crash": "execute", "hang": "execute", "slow": "compile",
          "raise": "compile", "unsupported": "compile", "oom": "execute", "nnfuzzbuild": "compile",
          "unpicklable": "execute", "stop": "execute"}
OUTPUT_FAULTS = {"wrong", "nan", "unpicklable", "f32"}  # change the outputs (applied after the run)


def unsupported_text(op: str = "FakeOp") -> str:
    """ONNX Runtime's words for a kernel it lacks (known to the ``ort`` engine's error patterns)."""
    return (f"[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for {op}(1) node "
            f"with name 'fake'")


_claimed: set = set()  # ``once`` keys whose one fault was taken
_claim_lock = threading.Lock()
_barriers: dict = {}   # ``meet`` key -> the barrier its runs wait at
_met: dict = {}        # ``meet`` key -> how many runs met the others there


def _meet(key: str, parties: int, seconds: float) -> None:
    """Wait until ``parties`` runs (of lanes' threads) are here at once, or ``seconds`` passed (then the
    run goes on alone: a lane the campaign held back must not hang the test)."""
    with _claim_lock:
        barrier = _barriers.get(key)
        if barrier is None or barrier.broken:
            barrier = _barriers[key] = threading.Barrier(parties)
    try:
        barrier.wait(seconds)
    except threading.BrokenBarrierError:
        return
    with _claim_lock:
        _met[key] = _met.get(key, 0) + 1


def met(key: str) -> int:
    """How many runs of backends given ``meet=key`` met ``parties - 1`` others mid-run."""
    return _met.get(key, 0)


def _inject(fault: str, slow_s: float) -> None:
    if fault == "crash":
        inprocess.die(signal.SIGSEGV, "fake backend: segmentation fault")
    elif fault == "hang":
        inprocess.take(float("inf"))
    elif fault == "slow":
        inprocess.take(slow_s)
    elif fault == "raise":
        raise RuntimeError("injected failure")
    elif fault == "unsupported":
        raise RuntimeError(unsupported_text())
    elif fault == "oom":
        raise MemoryError("fake backend: cannot allocate 64 GiB")
    elif fault == "nnfuzzbuild":
        from nnfuzz.errors import ModelBuildError

        raise ModelBuildError("building the model failed: injected")
    elif fault == "stop":
        inprocess.interrupt(signal.SIGTERM)


def _change(outputs: dict, fault: str) -> dict:
    if fault == "wrong":
        return {k: v + 1 for k, v in outputs.items()}
    if fault == "nan":
        return {k: np.full_like(v, np.nan) for k, v in outputs.items()}
    if fault == "f32":  # float64 outputs as a float32 kernel gives them (ORT's float64 Shrink, bugs/kept/0000)
        return {k: v.astype(np.float32).astype(np.float64) if v.dtype == np.float64 else v for k, v in outputs.items()}
    if fault == "unpicklable":
        return {k: (lambda v=v: v) for k, v in outputs.items()}
    return outputs


class FakeBackend(Backend):
    """ONNX models computed by ``onnx.reference.ReferenceEvaluator``; faults as the module says."""

    name = "fake-cpu"
    engine = "ort"  # speaks ONNX Runtime's error dialect (``unsupported``)
    device = "cpu"
    unoptimized = {"always": None}  # oracle=optlevel: the same backend without its fault
    default_fault = None            # ``always`` unless given (a variant that always fails)

    def __init__(self, always: str | None = "", after: int = 0, once: str | None = None, slow_s: float = 2.0,
                 lacks=(), meet: str | None = None, parties: int = 2, **options):
        always = self.default_fault if always == "" else always
        super().__init__(always=always, after=after, once=once, slow_s=slow_s, lacks=lacks, meet=meet,
                         parties=parties, **options)
        self.lacks = set(lacks)  # ONNX op types it has no kernel for: unsupported, as ORT says it
        self.meet, self.parties = meet, int(parties)
        fault, _, stage = (always or "").partition("@")
        if always is not None and (fault not in FAULTS or stage not in ("", "compile", "execute")):
            raise ConfigError(f"backend.options.always={always!r}; valid: a fault of {sorted(FAULTS)}, "
                              "optionally @compile or @execute")
        self.fault, self.stage = fault or None, stage or FAULTS.get(fault)
        self.after, self.once, self.slow_s = int(after), once, float(slow_s)
        self.models = 0

    @property
    def version(self) -> str:
        return "1.0-fake"

    @property
    def version_id(self) -> str:
        return "fake+numpy" + np.__version__

    def _hits(self) -> bool:
        """Whether this model gets the fault (counted per model, at its compile)."""
        self.models += 1
        if self.fault is None or self.models <= self.after:
            return False
        if self.once is None:
            return True
        with _claim_lock:
            if self.once in _claimed:
                return False
            _claimed.add(self.once)
            return True

    def compile(self, model_bytes: bytes):
        if self.meet is not None:
            _meet(self.meet, self.parties, 1.0)
        fault = self.fault if self._hits() else None
        if fault is not None and self.stage == "compile":
            _inject(fault, self.slow_s)
        return self.build(model_bytes), fault

    def run(self, compiled, inputs):
        model, fault = compiled
        if fault is not None and self.stage == "execute":
            _inject(fault, self.slow_s)
        outputs = self.evaluate(model, inputs)
        return _change(outputs, fault) if fault in OUTPUT_FAULTS else outputs

    # -- the computation (overridden by the variants) ---------------------------------------------

    def build(self, model_bytes: bytes):
        import onnx
        from onnx.reference import ReferenceEvaluator

        model = onnx.load_model_from_string(model_bytes)
        for node in model.graph.node:
            if node.op_type in self.lacks:
                raise RuntimeError(unsupported_text(node.op_type))
        return ReferenceEvaluator(model)

    def evaluate(self, model, inputs: dict) -> dict:
        wanted = set(model.input_names)
        outs = model.run(None, {k: v for k, v in inputs.items() if k in wanted})
        return {name: np.asarray(v) for name, v in zip(model.output_names, outs)}


class FakeGirBackend(FakeBackend):
    """nnfuzz graphs (the ``gir`` format) computed by nnfuzz's numpy reference."""

    name = "fakegir-cpu"
    formats = ("gir",)

    def warm_up(self) -> None:
        """Import every op's numpy eval now, while the sandbox starts (lane 0's before the other lanes
        start): importing them is not safe from several threads at once (nnfuzz/ops load_aspect)."""
        from nnfuzz.ops import load_aspect

        load_aspect("numpy")

    def build(self, model_bytes: bytes):
        from nnfuzz.materialize.portable import unpack

        return unpack(model_bytes)

    def evaluate(self, model, inputs: dict) -> dict:
        from nnfuzz.reference import evaluate

        gir, weights = model
        values = evaluate(gir, weights, inputs)
        return {name: values[name] for name in gir.outputs}


class FakeTanhCrashBackend(FakeGirBackend):
    """Dies by SIGSEGV compiling any graph that holds a Tanh, printing nothing: a native fault known only by
    its signal (triage/signal_crash.py localizes it to the Tanh)."""

    name = "faketanh-cpu"

    def build(self, model_bytes: bytes):
        gir, weights = super().build(model_bytes)
        if any(inst.op.name == "Tanh" for inst in gir.insts):
            inprocess.die(signal.SIGSEGV)
        return gir, weights


class FakeCrashBackend(FakeBackend):
    """Dies by SIGSEGV on every model (a compared system that crashes: oracle=cmp)."""

    default_fault = "crash"


class FakeUnsupportedBackend(FakeBackend):
    """Says it does not support any model, as ONNX Runtime does for a missing kernel."""

    default_fault = "unsupported"


class FakeNoFunctionsBackend(FakeBackend):
    """Says, as ORT does for an op it lacks, that it cannot run a model with local functions."""

    def build(self, model_bytes: bytes):
        import onnx

        if onnx.load_model_from_string(model_bytes).functions:
            raise RuntimeError(unsupported_text("NnfuzzFunction"))
        return super().build(model_bytes)


class FakeRewriteWrongBackend(FakeBackend):
    """Right on every model except one holding a local function of the metamorphic oracle's rewrite
    domain, where its outputs are off by one: a bug only the metamorphic oracle can see."""

    def compile(self, model_bytes: bytes):
        import onnx

        rewritten = any(o.domain == "nnfuzz.rewrite" for o in onnx.load_model_from_string(model_bytes).opset_import)
        return super().compile(model_bytes), rewritten

    def run(self, compiled, inputs):
        inner, rewritten = compiled
        outputs = super().run(inner, inputs)
        return _change(outputs, "wrong") if rewritten else outputs


class FakeInvalidBackend(FakeBackend):
    """Checks each model with the full ONNX checker and, on an invalid one, does ``on_invalid``: "crash"
    (dies by SIGSEGV), "reject" (a clean ValueError) or "accept-wrong-type" (accepts it and returns every
    declared output as float64 zeros of shape [1], contradicting the types the model declares)."""

    def __init__(self, on_invalid: str = "crash", **options):
        super().__init__(**options)
        self.choice("on_invalid", on_invalid, ("crash", "reject", "accept-wrong-type"))
        self.on_invalid = on_invalid

    def compile(self, model_bytes: bytes):
        import onnx

        model = onnx.load_model_from_string(model_bytes)
        try:
            onnx.checker.check_model(model, full_check=True)
        except Exception as e:  # noqa: BLE001 - any checker complaint: the model is invalid
            if self.on_invalid == "crash":
                inprocess.die(signal.SIGSEGV, f"fake backend: invalid model ({e})")
            if self.on_invalid == "reject":
                raise ValueError(f"invalid model: {e}") from None
            return "wrong-type", [o.name for o in model.graph.output]
        return super().compile(model_bytes)

    def run(self, compiled, inputs):
        if compiled[0] == "wrong-type":
            return {name: np.zeros((1,), dtype=np.float64) for name in compiled[1]}
        return super().run(compiled, inputs)


SAFE_OPS = ["Relu", "Add", "Mul", "Sigmoid", "Tanh", "Transpose"]  # finite reference outputs every time


def fake_campaign(out, options=None, backend: str = "FakeBackend", seed=1, by_path: bool = False, **kw):
    """``run_campaign`` on the in-process executor with ``backend`` (a class of this module) and its
    ``options``: small float32 graphs of SAFE_OPS from ``seed`` (None: drawn), 60 s bound, no probing
    (unless ``probe=True``).
    The backend is named by its class's name and ``backend_path``, or ``by_path`` by its "module:Class"
    path alone (as a user names a backend of their own). Returns (counters, the campaign's config)."""
    from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
    from nnfuzz.generate.policy import GenPolicy

    path = f"{__name__}:{backend}"
    kw.setdefault("policy", GenPolicy(max_nodes=4, dtypes=["float32"], include=SAFE_OPS, seed=seed))
    kw.setdefault("time_s", 60.0)
    kw.setdefault("probe", False)
    kw.setdefault("reduce", False)  # the background reducer starts a sandbox process: not in the fast tier
    cc = CampaignConfig(backend=path if by_path else globals()[backend].name, backend_options=options or {},
                        backend_path=None if by_path else path, out=out, ui="plain", executor="inprocess", **kw)
    return run_campaign(cc), cc


def records(out) -> list:
    """The records of ``out``'s campaign log (fuzz/runlog.py: its rotated parts, then campaign.jsonl);
    raises on a line that is not whole."""
    from nnfuzz.fuzz.runlog import read_log

    problems = []
    log = list(read_log(out, problems))
    assert not problems, problems
    return log


def folders(out) -> list:
    """``out``'s bug folders, in order."""
    return sorted(p for p in out.iterdir() if p.is_dir() and p.name.isdigit()) if out.is_dir() else []


class FakeLateBackend(FakeBackend):
    """FakeBackend whose every compile takes ``late_s`` seconds of real time: a campaign's time bound passes
    while a test is under way (the in-process executor's simulated time cannot move the campaign's clock)."""

    def __init__(self, late_s: float = 1.0, **options):
        super().__init__(**options)
        self.late_s = float(late_s)

    def compile(self, model_bytes: bytes):
        time.sleep(self.late_s)
        return super().compile(model_bytes)


class FakeDynamicBackend(FakeBackend):
    """FakeBackend taking dynamic ONNX models (fuzz.dynamic)."""

    dynamic_forms = ("onnx",)


class FakeStaleShapeBackend(FakeBackend):
    """Takes dynamic ONNX models and is right at the input shapes of each compiled model's first run, but
    a later run of it at other input shapes is off by one: a system that keeps a kernel specialized for
    the first shape (a stale shape-specialized kernel), a bug only a model run at several shapes can show
    (a static model inferred again and again at its one shape is right)."""

    dynamic_forms = ("onnx",)

    def compile(self, model_bytes: bytes):
        return [super().compile(model_bytes), None]

    def run(self, compiled, inputs):
        shapes = {k: np.shape(v) for k, v in inputs.items()}
        compiled[1] = shapes if compiled[1] is None else compiled[1]
        outputs = super().run(compiled[0], inputs)
        return _change(outputs, "wrong") if shapes != compiled[1] else outputs


class FakeRecompilingBackend(FakeBackend):
    """Takes dynamic ONNX models, right at every shape, but says it compiled again at shape 1 where no guard
    asks for it (Backend.unguarded_recompile): torch.compile's fault class that no real system shows on
    demand (backends/inductor_guards.py judges inductor's)."""

    dynamic_forms = ("onnx",)
    WHY = "recompiled for sizes {n=5}, which differ from sizes {n=2}, already served, only in unbacked n: no guard holds them"

    def compile(self, model_bytes: bytes):
        return [super().compile(model_bytes), 0]

    def run(self, compiled, inputs):
        compiled[1] += 1
        return super().run(compiled[0], inputs)

    def compiles(self, compiled) -> int:
        return 2 if compiled[1] > 1 else 1

    def unguarded_recompile(self, compiled):
        return {"shape": 1, "why": self.WHY} if compiled[1] > 1 else None


class FakeSymbolicSigmoidBackend(FakeBackend):
    """Takes dynamic ONNX models; its Sigmoid is 0.5 too high in a model with a ``dim_param`` input (a kernel
    chosen for symbolic shapes that is wrong) and right in a static one: a fault only the dynamic form shows,
    at every shape, in one op."""

    dynamic_forms = ("onnx",)

    def build(self, model_bytes: bytes):
        import onnx

        model = onnx.load_model_from_string(model_bytes)
        if any(d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim):
            _sigmoid_off(model)
        return super().build(model.SerializeToString())


def _sigmoid_off(model) -> None:
    """Each float32 Sigmoid's output gets 0.5 added (an Add node right after it)."""
    from onnx import helper, numpy_helper

    nodes = []
    for n in model.graph.node:
        nodes.append(n)
        if n.op_type == "Sigmoid":
            out = n.output[0]
            n.output[0] = out + "_sigmoid"
            nodes.append(helper.make_node("Add", [out + "_sigmoid", "_fake_half"], [out]))
    model.graph.initializer.append(numpy_helper.from_array(np.array(0.5, np.float32), "_fake_half"))
    del model.graph.node[:]
    model.graph.node.extend(nodes)
