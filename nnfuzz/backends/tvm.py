"""Apache TVM (0.27, Relax only): ONNX -> relax.frontend.onnx, or a GraphIR payload -> Relax directly
(materialize/relax), then tvm.compile -> relax.VirtualMachine."""
from __future__ import annotations

from typing import Dict

import numpy as np

from nnfuzz.backends import tvm_knowledge
from nnfuzz.backends.base import Backend, BackendUnavailable

PIPELINES = ("default", "default_build")  # fold + fuse, and no fusion: an opt-vs-unopt pair
# backend.options.format -> the formats a test is drawn from (BackendInfo.draw_formats): Relax-native
# models, ONNX models through the importer, or a seeded choice per test
FORMAT_CHOICES = {"relax": ("relax",), "onnx": ("onnx",), "mix": ("onnx", "relax")}


def relax_pipeline(name: str, target):
    """The Relax pipeline ``name`` for ``target``, built explicitly.

    TVM 0.27 maps the *string* "default" to its target-specific pipeline (LegalizeOps, FoldConstant,
    FuseOps, FuseTIR, and dlight schedules on GPUs) only for GPU targets; on llvm the string names
    the same pass list as "default_build" (no folding, no fusion). Passing the string would make
    tvm-cpu's opt-vs-unopt pair compare a pipeline with itself and never test fusion, so "default"
    is the target's default pipeline here on every target, and "default_build" is that pipeline
    without FoldConstant/FuseOps/FuseTIR (on a GPU target the dlight schedules are kept: unscheduled
    TIR has no thread bindings and cannot be built for CUDA).
    """
    import tvm
    from tvm import relax

    if name == "default":
        return relax.get_default_pipeline(target)
    if target.kind.name != "cuda":
        return relax.get_pipeline("default_build")
    from tvm.relax.backend.cuda import pipeline as cuda
    from tvm.s_tir import dlight as dl

    schedule = dl.ApplyDefaultSchedule(dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(),
                                       dl.gpu.GeneralReduction(), dl.gpu.Fallback())
    passes = (cuda.library_dispatch_passes(target) + [relax.transform.LegalizeOps(), schedule]
              + cuda.dataflow_lower_passes(target) + cuda.finalize_passes(target))

    @tvm.transform.module_pass(opt_level=0)
    def unfused(mod, _ctx):
        with target:
            return tvm.transform.Sequential(passes)(mod)

    return unfused


class _TvmBackend(Backend):
    engine = "tvm"
    target_kind = "llvm"
    formats = ("onnx", "relax")
    unoptimized = {"pipeline": "default_build"}
    # dim_param ONNX models (the Relax importer's symbolic shape vars) and Relax-native models built with
    # symbolic shape vars (materialize/relax/symbolic.py): compiled once, run at every shape
    dynamic_forms = ("onnx", "relax")
    symbolic_broadcast = False  # Relax gives such a broadcast no shape (docs/dynamic-findings-tvm.md)
    quantized = 0.1  # QDQ graphs: the Relax frontend's QuantizeLinear/DequantizeLinear (docs/quantization.md)
    known = tvm_knowledge.KNOWN
    error_ops = tvm_knowledge.ERROR_OPS
    error_nodes = tvm_knowledge.ERROR_NODES
    error_checks = tvm_knowledge.ERROR_CHECKS
    issue_template = staticmethod(tvm_knowledge.issue)
    repro_scripts = {"relax": "nnfuzz.triage.script:relax_script"}  # a Relax-native model's TVMScript

    def __init__(self, pipeline: str = "default", format: str = "mix", **options):
        super().__init__(pipeline=pipeline, format=format, **options)
        self.choice("pipeline", pipeline, PIPELINES)
        self.choice("format", format, FORMAT_CHOICES)
        import tvm

        self._tvm = tvm
        self.pipeline = pipeline
        self.draw_formats = FORMAT_CHOICES[format]

    @classmethod
    def dynamic_forms_for(cls, options) -> tuple:
        """Those of the formats ``backend.options.format`` sends (default mix: both)."""
        fmt = (options or {}).get("format", "mix")
        return tuple(f for f in cls.dynamic_forms if f in FORMAT_CHOICES.get(fmt, cls.dynamic_forms))

    @classmethod
    def check_available(cls) -> None:
        cls.require("tvm", "apache-tvm", "pip install -e '.[tvm]'")

    @property
    def version(self) -> str:
        return self._tvm.__version__

    @property
    def version_id(self) -> str:
        info = self._tvm.support.libinfo()
        commit = info.get("GIT_COMMIT_HASH") or info.get("GIT_COMMIT_TIME")
        return commit or f"{self._tvm.__version__} (wheel; no git hash in libinfo)"

    def device_handle(self):
        return self._tvm.cpu()

    def build(self, mod):
        target = self._tvm.target.Target(self.target_kind)
        return self._tvm.compile(mod, target=target, relax_pipeline=relax_pipeline(self.pipeline, target))

    def compile(self, model_bytes: bytes):
        from tvm import relax

        from nnfuzz.materialize.portable import is_payload

        if is_payload(model_bytes):
            return self.compile_relax(model_bytes)
        import onnx
        from tvm.relax.frontend.onnx import from_onnx

        model = onnx.load_model_from_string(model_bytes)
        mod = from_onnx(model, keep_params_in_input=False)
        ex = self.build(mod)
        vm = relax.VirtualMachine(ex, self.device_handle())
        params = {t.name for t in model.graph.initializer}  # a graph input with an initializer is a parameter
        in_names = [i.name for i in model.graph.input if i.name not in params]
        out_names = [o.name for o in model.graph.output]
        return vm, in_names, out_names

    def compile_relax(self, payload: bytes):
        """A GraphIR payload built as a Relax module (layout from its seed), weights bound, compiled."""
        from tvm import relax

        from nnfuzz.errors import ModelBuildError
        from nnfuzz.materialize.portable import relax_seed, unpack
        from nnfuzz.materialize.relax.build import bind_weights, build_relax

        gir, weights = unpack(payload)
        try:
            mod, _ = build_relax(gir, relax_seed(payload) or 0)
        except Exception as e:  # nnfuzz's side of the test: never reported as TVM's crash
            raise ModelBuildError(f"building the Relax module failed: {type(e).__name__}: {e}") from e
        vm = relax.VirtualMachine(self.build(bind_weights(mod, weights)), self.device_handle())
        return vm, list(gir.inputs), list(gir.outputs)

    def run(self, compiled, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        vm, in_names, out_names = compiled
        dev = self.device_handle()
        args = [self._tvm.runtime.tensor(np.array(inputs[n], order="C"), dev) for n in in_names]
        out = vm["main"](*args)
        outs = [out] if isinstance(out, self._tvm.runtime.Tensor) else list(out)
        return {n: self._array(o) for n, o in zip(out_names, outs)}

    def _array(self, o) -> np.ndarray:
        """An output as numpy: a tensor, or what the frontend folded a tensor output into (a PrimValue comes
        back as a Python scalar, a shape as a tuple of ints), as an array the verdict compares by value."""
        if isinstance(o, self._tvm.runtime.Tensor):
            return np.asarray(o.numpy())
        if isinstance(o, (bool, int, float, np.generic)):
            return np.asarray(o)
        return np.asarray([int(d) for d in o], dtype=np.int64)


class TvmCpuBackend(_TvmBackend):
    name = "tvm-cpu"
    device = "cpu"
    repro_onnx = tvm_knowledge.repro_onnx("cpu")


class TvmGpuBackend(_TvmBackend):
    name = "tvm-gpu"
    device = "gpu"
    repro_onnx = tvm_knowledge.repro_onnx("gpu")
    target_kind = "cuda"

    @classmethod
    def check_available(cls) -> None:
        super().check_available()
        import tvm

        if not tvm.cuda().exist:
            raise BackendUnavailable(
                "tvm-gpu needs a usable CUDA GPU, but tvm.cuda().exist is False on this machine "
                "(no GPU or no driver); use backend=tvm-cpu here"
            )

    def device_handle(self):
        return self._tvm.cuda()
