"""ONNX Runtime on CPU."""
from __future__ import annotations

from typing import Dict

import numpy as np

from nnfuzz.backends.base import Backend, BackendUnavailable

OPT_LEVELS = ("disable", "basic", "extended", "all")


class OrtBackend(Backend):
    name = "ort-cpu"
    system = "ort"
    device = "cpu"
    unoptimized = {"opt_level": "disable"}

    def __init__(self, opt_level: str = "all", **options):
        super().__init__(opt_level=opt_level, **options)
        self.choice("opt_level", opt_level, OPT_LEVELS)
        import onnxruntime as ort

        self._ort = ort
        ort.set_default_logger_severity(3)
        self.opt_level = opt_level

    @classmethod
    def check_available(cls) -> None:
        try:
            import onnxruntime  # noqa: F401
        except ImportError as e:
            raise BackendUnavailable(f"ort-cpu needs onnxruntime ({e}); install it with `pip install -e '.[onnx]'`")

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
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        return self._ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])

    def run(self, sess, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        wanted = {i.name for i in sess.get_inputs()}
        feed = {k: v for k, v in inputs.items() if k in wanted}
        names = [o.name for o in sess.get_outputs()]
        return dict(zip(names, sess.run(names, feed)))
