"""ONNX Runtime: the CPU execution provider (ort-cpu) and the CUDA one (ort-gpu)."""
from __future__ import annotations

from typing import Dict

import numpy as np

from nnfuzz.backends import ort_knowledge
from nnfuzz.backends.base import Backend, BackendUnavailable, worker_threads

OPT_LEVELS = ("disable", "basic", "extended", "all")
# ORT's session option for the MatMulNBits its QDQ transformer makes of DequantizeLinear(4/8-bit weight) ->
# MatMul: 4 (ORT's default) quantizes the activations to int8, a documented lossy mode a reference
# comparison reads as wrong values (campaigns 27/29: int4/int8 weights before a uint16 Q, off by up to
# 0.05); 0 leaves the kernel its most accurate one, so the fusion itself is what a test checks.
MATMULNBITS_ACCURACY_LEVELS = (0, 1, 2, 3, 4)
# ORT's graph pass that quantizes a float weight (and bias) between Q/DQ activations to uint8/int32 so that
# a QLinear kernel takes the node: by design lossy (per-tensor min/max), a step off where the spec computes
# with the float weight (an ort-cpu campaign's ConvTranspose folders, exact with the pass off)
WEIGHT_BIAS_QUANTIZATION = "WeightBiasQuantization"


class OrtBackend(Backend):
    name = "ort-cpu"
    engine = "ort"
    device = "cpu"
    unoptimized = {"opt_level": "disable"}
    dynamic_forms = ("onnx",)
    # its compile is cheap, so a dynamic test's 3-4 shapes cost what as many static tests do: a smaller share
    # keeps the default campaign's tests/s (ort-cpu, 25 s: 42.6 tests/s at 0.5, 63-73 at 0)
    dynamic_share = 0.2
    quantized = 0.1  # QDQ graphs: its QDQ transformers and QLinear kernels (docs/quantization.md)
    known = ort_knowledge.KNOWN
    error_ops = ort_knowledge.ERROR_OPS
    error_dropped = ort_knowledge.ERROR_DROPPED
    error_checks = ort_knowledge.ERROR_CHECKS
    repro_onnx = ort_knowledge.REPRO_ONNX
    issue_template = staticmethod(ort_knowledge.issue)
    precision_allowance = {"float16": ort_knowledge.FLOAT16_IN_FLOAT32}

    def __init__(self, opt_level: str = "all", matmulnbits_accuracy_level: int = 0,
                 weight_bias_quantization: bool = False, **options):
        super().__init__(opt_level=opt_level, matmulnbits_accuracy_level=matmulnbits_accuracy_level,
                         weight_bias_quantization=weight_bias_quantization, **options)
        self.choice("weight_bias_quantization", weight_bias_quantization, (False, True))
        self.weight_bias_quantization = weight_bias_quantization
        self.choice("opt_level", opt_level, OPT_LEVELS)
        self.choice("matmulnbits_accuracy_level", matmulnbits_accuracy_level, MATMULNBITS_ACCURACY_LEVELS)
        self.matmulnbits_accuracy_level = matmulnbits_accuracy_level
        import onnxruntime as ort

        self._ort = ort
        ort.set_default_logger_severity(3)
        self.opt_level = opt_level

    @classmethod
    def check_available(cls) -> None:
        cls.require("onnxruntime", "onnxruntime", "pip install -e '.[onnx]'")

    @property
    def version(self) -> str:
        return self._ort.__version__

    @property
    def version_id(self) -> str:
        return f"{self._ort.__version__}+{self._ort.get_device()}"

    def compile(self, model_bytes: bytes):
        so = self._ort.SessionOptions()
        so.graph_optimization_level = getattr(
            self._ort.GraphOptimizationLevel,
            {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
             "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}[self.opt_level])
        so.intra_op_num_threads = worker_threads()  # the worker's share of the cores
        so.inter_op_num_threads = 1
        so.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", str(self.matmulnbits_accuracy_level))
        off = [] if self.weight_bias_quantization else [WEIGHT_BIAS_QUANTIZATION]
        return self._ort.InferenceSession(model_bytes, so, providers=self.providers(), disabled_optimizers=off)

    def providers(self) -> list:
        return ["CPUExecutionProvider"]

    def run(self, sess, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        wanted = {i.name for i in sess.get_inputs()}
        feed = {k: v for k, v in inputs.items() if k in wanted}
        names = [o.name for o in sess.get_outputs()]
        return dict(zip(names, sess.run(names, feed)))


class OrtGpuBackend(OrtBackend):
    """The CUDA execution provider. TF32 is off (``use_tf32=0``), so float32 convolutions and matmuls
    keep float32 precision like the CPU reference. Nodes without a CUDA kernel run on ORT's implicit CPU
    fallback, as in any ORT session that names only the CUDA provider."""

    name = "ort-gpu"
    device = "gpu"
    CUDA = "CUDAExecutionProvider"

    @classmethod
    def check_available(cls) -> None:
        super().check_available()
        import onnxruntime as ort

        available = ort.get_available_providers()
        if cls.CUDA not in available:
            raise BackendUnavailable(
                f"ort-gpu needs onnxruntime's {cls.CUDA}, but this onnxruntime {ort.__version__} offers only "
                f"{available}: install onnxruntime-gpu (`pip uninstall onnxruntime && pip install onnxruntime-gpu`) "
                "on a machine with an NVIDIA GPU and CUDA/cuDNN libraries; use backend=ort-cpu here")
        # "available" only means compiled in: ORT falls back to the CPU, with a warning, when the CUDA
        # provider cannot load (missing CUDA/cuDNN libraries, no device); then ort-gpu would test CPU kernels
        from onnx import TensorProto, helper

        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
        g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "probe", [x],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        probe = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
        try:
            got = ort.InferenceSession(probe.SerializeToString(), providers=[cls.CUDA]).get_providers()
        except Exception as e:  # noqa: BLE001 - any failure to create a CUDA session means: unavailable
            got = [f"error: {type(e).__name__}: {e}"]
        if cls.CUDA not in got:
            raise BackendUnavailable(
                f"ort-gpu: onnxruntime {ort.__version__} lists the {cls.CUDA} but could not use it (a session "
                f"got {got}): check the CUDA and cuDNN versions onnxruntime-gpu needs and that a GPU is visible; "
                "use backend=ort-cpu here")

    def providers(self) -> list:
        return [(self.CUDA, {"use_tf32": "0"})]
