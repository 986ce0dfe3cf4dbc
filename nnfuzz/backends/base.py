"""The Backend contract: compile and run a model file; say what is missing when it cannot run."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, Dict, Optional, Tuple

import numpy as np

from nnfuzz.backends.known import Known
from nnfuzz.errors import NNFuzzError


class BackendUnavailable(NNFuzzError):
    """The backend cannot run on this machine (package missing, no GPU, ...); says what is missing."""


WORKER_THREADS_ENV = "NNFUZZ_WORKER_THREADS"


def worker_threads() -> int:
    """The threads a sandbox worker may compute on: the campaign sets it per worker (the cores divided
    among ``fuzz.workers``, fuzz/sizing.py) so N workers never oversubscribe the machine; 1 outside a
    campaign's worker. Backends pass it to their system (ORT intra-op threads, TF's thread pools, ...)."""
    import os

    try:
        return max(1, int(os.environ.get(WORKER_THREADS_ENV, "1")))
    except ValueError:
        return 1


@dataclass(frozen=True)
class BackendInfo:
    """What a backend is and takes: the one record of a backend's facts, with the one set of defaults
    (``Backend``'s class attributes default to these). A sandbox's worker builds it once started."""

    name: str                                  # the system, as meta.json names it: "ort-cpu"
    engine: str                                # the software underneath: "ort" (known.classify keys on it)
    device: str = "cpu"                        # "cpu" | "gpu"
    # What compile() receives: "onnx" (ONNX bytes) or "gir" (a nnfuzz.materialize.portable payload: the
    # GraphIR and weights, for systems that build the model themselves, like torch.compile and TF).
    formats: Tuple[str, ...] = ("onnx",)
    # Which lowerings the system's models are built from: "torch" (ONNX is exported from torch) or "tf";
    # ops without such a lowering are not offered to it.
    lowering: str = "torch"
    # The backend whose outputs are this system's reference, when torch eager is not (TF systems: TF eager).
    reference: Optional[str] = None
    # 32 for a system that computes int64 in 32 bits without saying so (OpenVINO's CPU plugin): the value
    # search then keeps int64 values within int32, so the wrap-around is never reported as a bug.
    int64_bits: int = 64
    # The formats tests are sent in, drawn per test by seed (format_for); empty: always ``format``.
    # tvm's backend.options.format sets it (relax, onnx, or mix: both).
    draw_formats: Tuple[str, ...] = ()
    # Options that turn the system's optimisations off, for the optlevel oracle (None: it has no such switch).
    unoptimized: Optional[Dict] = None
    # Cores one worker of the system keeps busy when given one compute thread (worker_threads() == 1),
    # e.g. a compiler that runs its own helper processes: the automatic fuzz.workers divides the cores by it
    # (fuzz/sizing.py).
    threads: int = 1
    # The share of QDQ graphs (nnfuzz/generate/qdq.py) its campaigns generate under mgen.quantized=null: the
    # systems whose quantization paths (QDQ fusions, integer kernels) are fuzzed by default set it.
    quantized: float = 0.0
    version: str = ""                          # the package's __version__ (known once an instance exists)
    version_id: str = ""                       # a git hash or build string, else the version

    @property
    def format(self) -> str:
        """The model format to send: ONNX where the backend takes it, else its first format."""
        return self.preferred_format(self.formats)

    def format_for(self, seed: int) -> str:
        """The format the test with ``seed`` is sent in: the one of ``draw_formats`` the seed draws."""
        if len(self.draw_formats) <= 1:
            return self.draw_formats[0] if self.draw_formats else self.format
        import numpy as np

        return self.draw_formats[int(np.random.default_rng([int(seed), 0xF04]).integers(len(self.draw_formats)))]

    @staticmethod
    def preferred_format(formats) -> str:
        return "onnx" if "onnx" in formats else formats[0]

    @classmethod
    def of(cls, backend: "Backend") -> "BackendInfo":
        """The facts of a backend instance (its class attributes, its version)."""
        t = type(backend)
        return cls(name=t.name, engine=t.engine, device=t.device, formats=tuple(t.formats), lowering=t.lowering,
                   draw_formats=tuple(getattr(backend, "draw_formats", ())), reference=t.reference,
                   int64_bits=t.int64_bits, unoptimized=t.unoptimized, threads=t.threads, quantized=t.quantized,
                   version=str(backend.version), version_id=str(backend.version_id))

    @classmethod
    def from_dict(cls, d: Dict) -> "BackendInfo":
        """From the dict a sandbox's worker reports (its fields, plus process facts that are dropped)."""
        import dataclasses

        fields = {f.name for f in dataclasses.fields(cls)}
        kept = {k: v for k, v in d.items() if k in fields}
        return cls(**{**kept, "formats": tuple(kept.get("formats", cls.formats)),
                      "draw_formats": tuple(kept.get("draw_formats", ()))})


class Backend:
    name: ClassVar[str]            # "ort-cpu": the system (BackendInfo.name)
    engine: ClassVar[str]          # "ort": the software underneath, shared by ort-cpu and ort-gpu
    device: ClassVar[str] = BackendInfo.device
    # the facts BackendInfo describes; the defaults are BackendInfo's
    formats: ClassVar[Tuple[str, ...]] = BackendInfo.formats
    lowering: ClassVar[str] = BackendInfo.lowering
    reference: ClassVar[Optional[str]] = BackendInfo.reference
    int64_bits: ClassVar[int] = BackendInfo.int64_bits
    unoptimized: ClassVar[Optional[Dict]] = BackendInfo.unoptimized
    threads: ClassVar[int] = BackendInfo.threads
    # Whether it runs a gradient test's payload (oracle=grad: the forward and the backward, returning the
    # gradients as outputs; materialize/torch/grad.py).
    gradients: ClassVar[bool] = False
    quantized: ClassVar[float] = BackendInfo.quantized

    # What the system knows about itself, read by the consumers through the class (a subclass extends
    # its parent's tuples: ``known = Parent.known + (...)``). None of it imports the framework.
    # The model formats in which it takes a dynamic model (symbolic input dims, compiled once and run at
    # several shapes; docs/dynamic-shapes.md): "onnx" (dim_param inputs) and/or "gir" (torch.compile dynamic).
    dynamic_forms: ClassVar[Tuple[str, ...]] = ()
    # fuzz.dynamic=auto's share of dynamic tests where it takes a dynamic form (oracles/dynamic.py)
    dynamic_share: ClassVar[float] = 0.5
    # False: its compiler cannot shape a broadcast of a symbolic dim against a constant > 1 or another
    # symbolic dim (TVM's Relax), so a family with one stays static (generate/dynamic.shapeless_broadcasts)
    symbolic_broadcast: ClassVar[bool] = True

    # Its known limitations (backends/known.py's ``Known``: error pattern, op, dtype, why): a matching
    # error is UNSUPPORTED, never a bug (verdict.judge through known.classify, by ``engine``).
    known: ClassVar[Tuple[Known, ...]] = ()
    # Its documented lower precision (triage/local_error.py): {dtype: why}. A node's inputs of these dtypes
    # are taken as known only to within half an ulp (the system keeps wider intermediates and rounds
    # only what it outputs), so a node at a rounding boundary may go either way.
    precision_allowance: ClassVar[Dict[str, str]] = {}
    # Its error patterns (triage/rootcause.py): regexes whose group 1 is the op the system's error names,
    # most specific first; regexes of its innermost check, with optional groups ``where`` (the condition
    # or error class) and ``file`` (no other named groups); lines of its wrapping that are never the message; and, for an error
    # log listing several failed ops, the regex heading each op's block (group 1: the op) and the one
    # ending the list (only the first block is read); regexes whose group 1 is the name of the model's
    # node that the error names as failing (triage/crash_prefix.py finds that node's prefix); regexes whose
    # group 1 is a value of the model that the system's optimized graph reads but no node of it gives any
    # more (a pass removed its producer: crash_prefix.py charges that producer's op).
    error_ops: ClassVar[Tuple[str, ...]] = ()
    error_nodes: ClassVar[Tuple[str, ...]] = ()
    error_dropped: ClassVar[Tuple[str, ...]] = ()
    error_checks: ClassVar[Tuple[str, ...]] = ()
    error_noise: ClassVar[Tuple[str, ...]] = ()
    error_blocks: ClassVar[Optional[Tuple[str, str]]] = None
    # Its repro-script snippet for an ONNX bug (triage/script.py): (what the script needs besides numpy
    # and onnx, the code that compiles ``MODEL`` (ONNX bytes), the code that runs the compiled model on
    # ``INPUTS`` and fills ``OUTPUTS`` by name). A dynamic model's script compiles once and runs every shape;
    # a pair (needs, the code that does both) writes static scripts only.
    repro_onnx: ClassVar[Optional[Tuple[str, ...]]] = None
    # The same for a GraphIR bug of a TF system (triage/script_tf.py): the code runs the SavedModel in
    # ``model_dir`` on ``INPUTS`` and fills ``OUTPUTS`` in the order of ``OUTPUT_NAMES``.
    repro_gir: ClassVar[Optional[Tuple[str, str]]] = None
    # Who writes the whole script for a bug in a model format other than through ``repro_onnx``:
    # {format: "module:function"}, the function taking (bug, backend name, head: the fields every script
    # has, triage/script.py write_script) and returning the script's text.
    repro_scripts: ClassVar[Dict[str, str]] = {}
    # Its issue template (triage/report_md.py): ``(facts, script) -> report.md`` in the system's own
    # tracker's form; ``facts`` are report_md.facts' strings.
    issue_template: ClassVar[Optional[Callable[[dict, str], str]]] = None
    # How a report names this system when it is another system's reference (``reference``): e.g. "TF
    # eager, op by op" (triage/report_md.py; None: a GraphIR bug's reference is torch eager).
    as_reference: ClassVar[Optional[str]] = None

    def __init__(self, **options):
        self.options = options

    @classmethod
    def dynamic_forms_for(cls, options) -> Tuple[str, ...]:
        """The dynamic forms the system takes under ``backend.options`` (a subclass whose options choose the
        formats it is sent narrows ``dynamic_forms`` to theirs)."""
        return tuple(cls.dynamic_forms)

    @classmethod
    def oracle_for(cls, options) -> Optional[str]:
        """The oracle that ``oracle=reference`` means for the system under ``backend.options`` (None: the
        reference oracle): tflite-cpu's ``quantize=int8`` is judged by the int8 oracle (oracles/int8.py)."""
        return None

    @classmethod
    def probe_variant(cls, options) -> str:
        """What of ``backend.options`` changes the kernels the system runs, so that the op x dtype probe is
        cached apart for it (fuzz/probe.py; "": nothing does). tflite-cpu: "quantize=int8"."""
        return ""

    @staticmethod
    def choice(key: str, value, choices) -> None:
        """Raise ConfigError showing ``backend.<key>=value`` and the valid choices unless it is one."""
        if value not in choices:
            from nnfuzz.errors import ConfigError

            raise ConfigError(f"backend.options.{key}={value!r}; valid choices: {list(choices)}")

    @classmethod
    def check_available(cls) -> None:
        """Raise BackendUnavailable saying what is missing and how to get it."""

    @classmethod
    def require(cls, module: str, what: str, install: str) -> None:
        """Import ``module`` or raise BackendUnavailable: ``<name> needs <what> (<error>); install it with ...``."""
        import importlib

        try:
            importlib.import_module(module)
        except ImportError as e:
            raise BackendUnavailable(f"{cls.name} needs {what} ({e}); install it with `{install}`") from None

    def warm_up(self) -> None:
        """One-off costs of a fresh process (a first compile), paid by the sandbox worker while it starts
        rather than by the first model's test_timeout. Not called where only the version is wanted."""

    @property
    def version(self) -> str:
        raise NotImplementedError

    @property
    def version_id(self) -> str:
        """A git hash or build string where the system exposes one, else the version."""
        return self.version

    def compile(self, model_bytes: bytes):
        """Compile a model (ONNX bytes, or a portable GraphIR payload for "gir" backends); return whatever
        ``run`` needs."""
        raise NotImplementedError

    def run(self, compiled, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        raise NotImplementedError

    def compiles(self, compiled) -> int:
        """How many times the system compiled ``compiled``'s model so far, its first compile included: 1
        unless it recompiles on its own (torch.compile's guards: backends/inductor.py). A dynamic model
        (docs/dynamic-shapes.md) is compiled once and run at every shape; the oracle records this count."""
        return 1

    def unguarded_recompile(self, compiled) -> Optional[dict]:
        """The first recompilation of ``compiled``'s dynamic model that no guard should have asked for
        (backends/inductor_guards.py), {"shape": k, "why": one line}: a bug the dynamic oracle reports.
        None: there was none, or the system does not tell."""
        return None

    # Set by the compile-and-run (fuzz/worker.py run_backend_shapes) for the run in progress: told the part
    # of a gradient test the run enters, so that a crash or hang there is signed by it (docs/oracles.md).
    on_part: Optional[Callable[[str], None]] = None

    def entering(self, part: str) -> None:
        """(In ``compile`` or ``run`` of a gradient test.) The run enters ``part``: "forward" (the compiled
        forward, which torch.compile traces with its backward) or "backward" (the backward graph's compile
        and run). A crash or hang from here on is the part's (meta.json ``grad.failed``)."""
        if self.on_part is not None:
            self.on_part(part)
