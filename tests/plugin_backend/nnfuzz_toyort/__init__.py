"""``toyort-cpu``: an nnfuzz backend kept outside nnfuzz, as a third party writes one (docs/backends.md,
"A backend in another package"). It runs ONNX models on ONNX Runtime's CPU provider with every graph
optimisation off, and carries its own knowledge: a known limitation, the op its errors name, the
repro-script snippet and an issue template."""
from __future__ import annotations

from typing import Dict

import numpy as np

from nnfuzz.backends.base import Backend, worker_threads
from nnfuzz.backends.known import Known

__version__ = "0.1.0"

RUN_SNIPPET = '''
import onnxruntime as ort
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
sess = ort.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"])
OUTPUTS = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {i.name: INPUTS[i.name] for i in sess.get_inputs()})))
'''


def issue(f: dict, script: str) -> str:
    """The report of a bug, in this backend's own (made-up) tracker's form."""
    return f"## toyort {f['version']}: {f['what']}\n\n{f['expected']}\n\n```python\n{script}\n```\n"


class ToyOrtBackend(Backend):
    name = "toyort-cpu"
    engine = "toyort"
    device = "cpu"
    known = (
        Known(r"NOT_IMPLEMENTED : Could not find an implementation for",
              note="toyort: onnxruntime has no CPU kernel for this op x dtype"),
        Known(r"Numpy_type \d+ can't be converted to MLDataType|tensor\(bfloat16\)", kind="io", dtype="bfloat16",
              note="toyort: the onnxruntime Python API cannot feed bfloat16"),
    )
    error_ops = (r"\bNode \([^)]*\) Op \((\w+)\)",)
    repro_onnx = ("onnxruntime", RUN_SNIPPET)
    issue_template = staticmethod(issue)

    @classmethod
    def check_available(cls) -> None:
        cls.require("onnxruntime", "onnxruntime", "pip install onnxruntime")

    def __init__(self, **options):
        super().__init__(**options)
        import onnxruntime as ort

        self._ort = ort

    @property
    def version(self) -> str:
        return f"{__version__}+ort{self._ort.__version__}"

    def compile(self, model_bytes: bytes):
        so = self._ort.SessionOptions()
        so.graph_optimization_level = self._ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.intra_op_num_threads = worker_threads()
        return self._ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])

    def run(self, sess, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        feed = {i.name: inputs[i.name] for i in sess.get_inputs()}
        names = [o.name for o in sess.get_outputs()]
        return dict(zip(names, sess.run(names, feed)))
