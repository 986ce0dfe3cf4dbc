"""TorchInductor: the GraphIR payload -> GraphModule -> torch.compile(backend="inductor", fullgraph=True).

compile() also makes the first call (on zeros of the inputs' shapes and dtypes), so that tracing and
code generation, which torch.compile does lazily on the first call, are staged "compile"; run() then
calls the compiled module on the real inputs (same shapes, dtypes and grad mode: no recompile).

Every compile starts with ``torch._dynamo.reset()``: all models share one code object
(``GraphModule.forward``), so without it dynamo would count each new model as a recompile of the last,
make later ones dynamic-shaped, and fail with ``FailOnRecompileLimitHit`` from the 9th model on.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Dict, Optional, Set

import numpy as np

from nnfuzz.backends import inductor_knowledge
from nnfuzz.backends.base import Backend, BackendUnavailable
from nnfuzz.backends.inductor_guards import Recompiles

MODES = (None, "default", "reduce-overhead", "max-autotune-no-cudagraphs")
# backend.options.dynamic: how a dynamic model's symbolic dims are marked (docs/dynamic-shapes.md)
DYNAMIC = ("unbacked", "backed")


class _InductorBackend(Backend):
    engine = "inductor"
    known = inductor_knowledge.KNOWN
    error_checks = inductor_knowledge.ERROR_CHECKS
    issue_template = staticmethod(inductor_knowledge.issue)
    repro_scripts = {"gir": "nnfuzz.triage.script_torch:torch_script"}  # the torch.export program
    formats = ("gir",)
    dynamic_forms = ("gir",)
    lowering = "torch"
    unoptimized = "eager"  # oracle=optlevel compares torch.compile with torch eager (the default reference)
    gradients = True  # oracle=grad: it also runs the backward (backends/torch_grad.py)
    torch_device = "cpu"

    def __init__(self, cache_dir=None, mode=None, dynamic="unbacked", **options):
        super().__init__(cache_dir=cache_dir, mode=mode, dynamic=dynamic, **options)
        self.choice("mode", mode, MODES)
        self.choice("dynamic", dynamic, DYNAMIC)
        self.dynamic = dynamic
        self._graphs_before = 0  # dynamo's graph count when the last model's compile began (compiles)
        if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
            from nnfuzz.errors import ConfigError

            raise ConfigError(f"backend.options.cache_dir={cache_dir!r} must be a directory path or null "
                              "(null: each sandbox worker's own directory, removed with it)")
        # read by torch._inductor.runtime.cache_dir_utils.cache_dir() on every use. null: the sandbox worker's
        # own scratch directory (fuzz/worker_handle.py), removed with it: torch writes a kernel's .so in place,
        # and a worker killed mid-compile left a truncated one in the shared cache, which the test's retry on a
        # fresh worker then loaded ("ImportError: ... file too short", a false crash of an oracle=grad campaign)
        from nnfuzz.fuzz.worker_handle import SCRATCH_ENV
        import torch

        self._torch = torch
        self._seed = None  # where this worker's warmed-up cache goes for the next workers (see warm_up)
        if cache_dir is not None:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.abspath(os.fspath(cache_dir))
        elif os.environ.get(SCRATCH_ENV):  # (in-process, outside a sandbox worker: torch's default)
            own = os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(os.environ[SCRATCH_ENV], "inductor")
            self._seed = _warm_cache(torch, self.torch_device)
            if self._seed.is_dir():  # a worker's cache right after its warm-up: its first compiles done
                shutil.copytree(self._seed, own, dirs_exist_ok=True)
                self._seed = None
        self.mode = mode
        self.cache_dir = cache_dir

    def warm_up(self) -> None:
        """Compile a one-op function once, while the worker starts: the first compile in a process (C++
        header build, codegen imports: 10-40 s) must not count against the first model's test_timeout."""
        torch = self._torch
        from torch._inductor import config

        fn = torch.compile(lambda x: torch.relu(x) + 1, backend="inductor", mode=self.mode, fullgraph=True)
        # without the FX graph cache: a cache hit (a warm /tmp/torchinductor_<user>) skips the graph passes,
        # whose one-off pattern registration (joint_graph.lazy_init: 10-40 s) then lands in the first model's
        # compile and times it out
        with torch.no_grad(), self._default_device(), config.patch(fx_graph_cache=False):
            fn(torch.zeros(4, device=self.torch_device))
        self._sync()
        torch._dynamo.reset()
        if self._seed is not None:
            _keep_warm_cache(os.environ["TORCHINDUCTOR_CACHE_DIR"], self._seed)

    @classmethod
    def check_available(cls) -> None:
        cls.require("torch._inductor", "torch with TorchInductor", "pip install torch==2.13.0")

    @property
    def version(self) -> str:
        return self._torch.__version__

    @property
    def version_id(self) -> str:
        return getattr(self._torch.version, "git_version", None) or self._torch.__version__

    def compile(self, model_bytes: bytes):
        torch = self._torch
        from nnfuzz.backends.torch_grad import compile_grad
        from nnfuzz.materialize.portable import grad_spec, unpack
        from nnfuzz.materialize.torch.module import GraphModule
        from nnfuzz.materialize.values import to_torch

        gir, weights = unpack(model_bytes)
        if grad_spec(model_bytes) is not None:  # oracle=grad: the forward and the backward
            return compile_grad(self, gir, weights, grad_spec(model_bytes))
        torch._dynamo.reset()
        self._graphs_before = _graphs_compiled()
        module = GraphModule(gir, weights).eval().to(self.torch_device)
        dynamic = gir.family is not None  # a dynamic model (docs/dynamic-shapes.md): symbolic sizes
        fn = torch.compile(module, backend="inductor", mode=self.mode, fullgraph=True, dynamic=dynamic)
        zeros = [to_torch(np.zeros([int(d) for d in gir.vars[i].shape], gir.vars[i].dtype.numpy()),
                          gir.vars[i].dtype).to(self.torch_device) for i in gir.inputs]
        recompiles = None
        if dynamic:
            unbacked = mark_dynamic(torch, gir, zeros, self.dynamic)
            recompiles = Recompiles(gir, unbacked, [z.shape for z in zeros])
        with torch.no_grad(), self._default_device():
            fn(*zeros)  # the first call traces and compiles
        self._sync()
        return fn, gir, recompiles

    def run(self, compiled, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        torch = self._torch
        from nnfuzz.backends.torch_grad import GradCompiled, run_grad
        from nnfuzz.materialize.values import to_numpy, to_torch

        if isinstance(compiled, GradCompiled):
            return run_grad(self, compiled, inputs)
        fn, gir, recompiles = compiled
        xs = [to_torch(inputs[i], gir.vars[i].dtype).to(self.torch_device) for i in gir.inputs]
        graphs = _graphs_compiled()
        with torch.no_grad(), self._default_device():
            outs = fn(*xs)
            outs = [o.cpu() for o in outs]  # copies before a cudagraph replay could reuse the memory
        if recompiles is not None:
            recompiles.called([x.shape for x in xs], _graphs_compiled() > graphs)
        return {name: to_numpy(o) for name, o in zip(gir.outputs, outs)}

    def compiles(self, compiled) -> int:
        """The graphs dynamo compiled since this model's compile began: 1, plus one per recompilation a
        failed guard caused (dynamo's ``unique_graphs`` counter, which its ``reset`` leaves as it is)."""
        return _graphs_compiled() - self._graphs_before

    def unguarded_recompile(self, compiled) -> Optional[dict]:
        recompiles = compiled[2] if isinstance(compiled, tuple) else None
        return recompiles.fault if recompiles is not None else None

    def compile_grad_module(self, module):
        """torch.compile of a gradient test's module (oracle=grad, backends/torch_grad.py)."""
        return self._torch.compile(module, backend="inductor", mode=self.mode, fullgraph=True, dynamic=False)

    def _sync(self) -> None:
        pass

    def _default_device(self):
        return contextlib.nullcontext()


def _graphs_compiled() -> int:
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def mark_dynamic(torch, gir, inputs, how: str) -> Set[str]:
    """Mark every symbolic axis of the family's inputs: ``unbacked`` (``mark_unbacked``: one graph for
    every size; what a dynamic ONNX model is) or ``backed`` (``mark_dynamic``, dynamo's
    default path: a size 0 or 1 is specialized, so a shape with a 1 there recompiles, and is counted).
    A symbol that broadcasting stretches from 1 at some shape (``generate.dynamic.broadcast_ones``) is
    not marked (``dynamic=True`` keeps it symbolic, specialized where torch must): torch reports an
    unbacked size as never 1, so it compiles that broadcast as an equality of the sizes and fails its own
    guard on the size-1 input ("Guard failed on the same frame it was created"), and a ``mark_dynamic``
    size that the broadcast then equals to a static size is a ConstraintViolationError. Returns the
    symbols marked unbacked (backends/inductor_guards.py)."""
    from nnfuzz.generate.dynamic import broadcast_ones

    stretched, unbacked = broadcast_ones(gir), set()
    for name, t in zip(gir.inputs, inputs):
        for axis, sym in enumerate(gir.family.dims.get(name) or ()):
            if sym is None or sym in stretched:
                continue
            if how == "unbacked":
                torch._dynamo.decorators.mark_unbacked(t, axis)
                unbacked.add(sym)
            elif t.shape[axis] > 1:  # (mark_dynamic refuses a size-1 dim)
                torch._dynamo.mark_dynamic(t, axis)
    return unbacked


class InductorCpuBackend(_InductorBackend):
    name = "inductor-cpu"
    device = "cpu"


class InductorGpuBackend(_InductorBackend):
    name = "inductor-gpu"
    device = "gpu"
    torch_device = "cuda"

    def __init__(self, cache_dir=None, mode=None, **options):
        super().__init__(cache_dir=cache_dir, mode=mode, **options)
        torch = self._torch
        # full float32 like the CPU reference: no TF32 in cuBLAS/cuDNN matmuls and convolutions
        try:
            torch.backends.cuda.matmul.fp32_precision = "ieee"
            torch.backends.cudnn.conv.fp32_precision = "ieee"
        except AttributeError:  # torch < 2.9
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False

    @classmethod
    def check_available(cls) -> None:
        super().check_available()
        import torch

        if not torch.cuda.is_available():
            cuda = torch.version.cuda
            why = (f"this torch ({torch.__version__}) is a CPU-only build" if cuda is None
                   else f"torch (CUDA {cuda}) finds no usable GPU (no GPU or no driver)")
            raise BackendUnavailable(
                f"inductor-gpu needs a CUDA GPU, but torch.cuda.is_available() is False: {why}; "
                "use backend=inductor-cpu here, or install a CUDA build of torch on a machine with an NVIDIA GPU"
            )

    def _sync(self) -> None:
        self._torch.cuda.synchronize()

    def _default_device(self):
        # lowerings that make tensors without a device (BatchNorm's statistics, index_select's indices)
        # make them on the GPU too
        return self._torch.device(self.torch_device)


def _warm_cache(torch, device: str) -> Path:
    """The cache directory a worker of this torch and device had right after its warm-up (cache_root()/
    inductor-warm/...): a fresh worker's own directory starts as a copy of it, which saves it the warm-up's
    C++ compiles (17 s, 6.5 s with the copy, on this 2-core machine)."""
    from nnfuzz.cache_root import cache_root

    version = getattr(torch.version, "git_version", None) or torch.__version__
    return cache_root() / "inductor-warm" / f"{torch.__version__}-{version[:12]}-{device}"


def _keep_warm_cache(own: str, seed: Path) -> None:
    """Copy a worker's cache, complete after its warm-up, to ``seed`` for the next workers: copied beside it and
    renamed into place (a worker killed while copying leaves no half seed; another worker's seed, made at the
    same time, wins)."""
    seed.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=seed.name + ".", dir=seed.parent))
    try:
        shutil.copytree(own, tmp, dirs_exist_ok=True)
    except BaseException:  # (a full disk: shown by the worker's start, with no half copy left)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        os.rename(tmp, seed)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not seed.is_dir():  # (not another worker's seed, made meanwhile: a real error, shown)
            raise
