"""OpenVINO on CPU: ONNX bytes -> Core.read_model (its ONNX frontend, from memory) -> compile_model("CPU").

The inference precision is pinned (``INFERENCE_PRECISION_HINT``): left alone, the CPU plugin computes
float32 models in bfloat16 on CPUs that support it (AVX512-BF16, AMX), which a float32 reference would
report as wrong values. Inference threads: the worker's share of the cores (backends/base.py worker_threads), like ort-cpu.

The CPU plugin also computes int64 in int32 (converts at the edges), so an int64 value beyond +-2**31
wraps, silently. ``int64_bits = 32`` tells the campaign, whose value search then keeps every int64 value
within int32 (a model it cannot keep there has an undefined reference and is not compared).
"""
from __future__ import annotations

from typing import Dict

import numpy as np

from nnfuzz.backends import openvino_knowledge as knowledge
from nnfuzz.backends.base import Backend, worker_threads

PRECISIONS = ("f32", "bf16", "f16")
# The CPU plugin has no float64 kernels: it converts float64 tensors to float32 (and back at the model's
# edges), so float64 outputs are float32-accurate and would be judged at float64 tolerances. Models whose
# inputs and outputs are not float64 run: the float64 constants and casts torch's exporter inserts into
# float32 graphs (Clip bounds, IsInf) lose nothing in float32.
F64_MESSAGE = ("openvino-cpu does not compute in float64: the CPU plugin converts float64 tensors to float32 "
               "(no float64 kernels), so this model's float64 inputs or outputs cannot be checked")


class OpenVinoBackend(Backend):
    name = "openvino-cpu"
    engine = "openvino"
    device = "cpu"
    dynamic_forms = ("onnx",)
    known = knowledge.KNOWN
    error_ops = knowledge.ERROR_OPS
    error_nodes = knowledge.ERROR_NODES
    error_checks = knowledge.ERROR_CHECKS
    error_noise = knowledge.ERROR_NOISE
    error_blocks = knowledge.ERROR_BLOCKS
    repro_onnx = knowledge.REPRO_ONNX
    issue_template = staticmethod(knowledge.issue)
    unoptimized = None  # the CPU plugin has no switch that turns its graph transformations off
    quantized = 0.1  # QDQ graphs: its low-precision transformations (docs/quantization.md)
    int64_bits = 32     # see the module docstring: int64 is computed as int32
    precision_allowance = dict.fromkeys(
        ("float16", "bfloat16"), "the CPU plugin computes float16 and bfloat16 models in float32 (its "
        "inference_precision hint is f32 here) and rounds only the outputs, where the reference rounds every step")

    def __init__(self, precision: str = "f32", **options):
        super().__init__(precision=precision, **options)
        self.choice("precision", precision, PRECISIONS)
        import openvino as ov

        self._ov = ov
        self.core = ov.Core()
        self.precision = precision
        self.config = {"INFERENCE_PRECISION_HINT": precision, "INFERENCE_NUM_THREADS": worker_threads()}

    @classmethod
    def check_available(cls) -> None:
        cls.require("openvino", "openvino", "pip install -e '.[openvino]'")

    @property
    def version(self) -> str:
        return self._ov.__version__.split("-")[0]

    @property
    def version_id(self) -> str:
        return self._ov.get_version()  # "2026.4.1-22982-e213a147257-releases/2026/4": build number and commit

    def compile(self, model_bytes: bytes):
        import onnx

        names = [o.name for o in onnx.load_model_from_string(model_bytes).graph.output]
        model = self.core.read_model(model=model_bytes)  # bytes: parsed in memory, no temporary file
        f64 = self._ov.Type.f64
        if any(p.get_element_type() == f64 for p in [*model.inputs, *model.outputs]):
            raise RuntimeError(F64_MESSAGE)
        return self.core.compile_model(model, "CPU", self.config), names

    def run(self, compiled, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        cm, names = compiled
        wanted = {n for p in cm.inputs for n in p.get_names()}
        feed = {k: _to_ov(self._ov, v) for k, v in inputs.items() if k in wanted}
        req = cm.create_infer_request()
        req.infer(feed)
        return {n: _from_ov(req.get_tensor(cm.output(n))) for n in names}


def _to_ov(ov, a: np.ndarray):
    if str(a.dtype) == "bfloat16":  # numpy has no bfloat16: hand over the raw bits as an ov bf16 tensor
        bits = np.asarray(a, order="C").view(np.uint16)
        t = ov.Tensor(ov.Type.bf16, ov.Shape(list(a.shape)))
        if a.size:
            np.copyto(t.data.view(np.uint16).reshape(a.shape), bits)
        return t
    return np.asarray(a, order="C")  # not ascontiguousarray: that makes 0-d arrays 1-d


def _from_ov(t) -> np.ndarray:
    if t.element_type.get_type_name() == "bf16":
        import ml_dtypes

        return np.array(t.data, copy=True).view(np.uint16).view(ml_dtypes.bfloat16).reshape(list(t.shape))
    return np.array(t.data, copy=True)
