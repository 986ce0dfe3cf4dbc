"""TensorFlow: eager (``tf-cpu``, the reference of the TF systems) and XLA (``xla-cpu`` / ``xla-gpu``:
``tf.function(jit_compile=True)``). They take the GraphIR payload and build the model with the TF lowerings."""
from __future__ import annotations

from functools import partial
from typing import Dict

import numpy as np

from nnfuzz.backends import tf_knowledge
from nnfuzz.backends.base import Backend, BackendUnavailable, worker_threads


class _TfBackend(Backend):
    engine = "tf"
    formats = ("gir",)
    lowering = "tf"
    device = "cpu"
    known = tf_knowledge.KNOWN
    repro_gir = tf_knowledge.REPRO_TF
    repro_scripts = {"gir": "nnfuzz.triage.script_tf:tf_script"}
    issue_template = staticmethod(partial(tf_knowledge.issue, part="TF eager"))

    def __init__(self, **options):
        super().__init__(**options)
        from nnfuzz.materialize.tensorflow.lazy import tf

        self._tf = tf
        try:  # the worker's share of the cores (one by default); CPU backends do not see a GPU
            tf.config.threading.set_intra_op_parallelism_threads(worker_threads())
            tf.config.threading.set_inter_op_parallelism_threads(1)
            if self.device == "cpu":
                tf.config.set_visible_devices([], "GPU")
        except RuntimeError:
            # TF refuses these once its runtime started in this process (a test, or `nnfuzz backends`);
            # a sandbox worker always starts fresh, so campaigns always get the settings above
            pass

    @classmethod
    def check_available(cls) -> None:
        cls.require("tensorflow", "tensorflow", "pip install -e '.[tf]'")

    @property
    def version(self) -> str:
        return self._tf.__version__

    @property
    def version_id(self) -> str:
        return self._tf.version.GIT_VERSION

    def _graph(self, payload: bytes):
        from nnfuzz.materialize.portable import unpack
        from nnfuzz.materialize.tensorflow.module import TFGraph

        gir, weights = unpack(payload)
        return TFGraph(gir, weights)

    def _device(self):
        return self._tf.device("/GPU:0" if self.device == "gpu" else "/CPU:0")


class TfEagerBackend(_TfBackend):
    """TF eager, op by op: the reference the TF systems are compared with (also a system under test
    against torch eager)."""
    name = "tf-cpu"
    as_reference = "TF eager, op by op"
    gradients = True  # oracle=grad: the gradients under a tf.GradientTape, op by op (backends/tf_grad.py)

    def compile(self, payload: bytes):
        from nnfuzz.backends.tf_grad import grad_step
        from nnfuzz.materialize.portable import grad_spec

        spec = grad_spec(payload)
        return self._graph(payload) if spec is None else grad_step(self._graph(payload), spec, entering=self.entering)

    def run(self, graph, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        from nnfuzz.backends.tf_grad import TfGradStep, run_step

        with self._device():
            return run_step(graph, inputs) if isinstance(graph, TfGradStep) else graph.eager(inputs)


class XlaCpuBackend(_TfBackend):
    name = "xla-cpu"
    engine = "xla"
    reference = "tf-cpu"
    repro_gir = tf_knowledge.REPRO_XLA
    issue_template = staticmethod(partial(tf_knowledge.issue, part="XLA (tf.function(jit_compile=True))"))
    unoptimized = {"jit_compile": False}  # a plain tf.function (grappler, no XLA)
    # a dynamic model is a tf.function with None dims, traced once (docs/dynamic-shapes.md); XLA compiles it
    # once per concrete shape (compiles()), so fuzz.dynamic=auto gives it no share: fuzz.dynamic=0.5 opts in
    dynamic_forms = ("tf",)
    dynamic_share = 0.0
    gradients = True  # oracle=grad: the tape's gradients inside the compiled function (backends/tf_grad.py)
    precision_allowance = dict.fromkeys(("float16", "bfloat16"), tf_knowledge.XLA_EXCESS_PRECISION)

    def __init__(self, jit_compile: bool = True, **options):
        super().__init__(jit_compile=jit_compile, **options)
        self.choice("jit_compile", jit_compile, (True, False))
        self.jit_compile = jit_compile

    def compile(self, payload: bytes):
        from nnfuzz.backends.tf_grad import grad_step, run_step, zeros_with_upstream
        from nnfuzz.materialize.portable import grad_spec

        graph, spec = self._graph(payload), grad_spec(payload)
        if spec is not None:  # oracle=grad: forward and backward in one compiled step
            step = grad_step(graph, spec, self.jit_compile)
            with self._device():
                run_step(step, zeros_with_upstream(graph.gir, spec))
            return step
        fn = graph.function(jit_compile=self.jit_compile)  # (a dynamic graph: None dims, traced once)
        compiled = XlaCompiled(graph, fn)
        with self._device():
            compiled.call(graph.zeros())  # XLA compiles on the first call: errors belong to the compile stage
        return compiled

    def run(self, compiled, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        from nnfuzz.backends.tf_grad import TfGradStep, run_step

        if isinstance(compiled, TfGradStep):
            with self._device():
                return run_step(compiled, inputs)
        with self._device():
            return compiled.graph.outputs(compiled.call(compiled.graph.feed(inputs)))

    def compiles(self, compiled) -> int:
        """A plain tf.function (jit_compile=False): its traces (one for a dynamic model's None dims). XLA
        (jit_compile=True) compiles the traced function once per concrete input shapes (its executables
        are cached by argument shapes; TF's device_compiler log shows one XLA compile per new shape): the
        distinct input shapes it was called with."""
        if not isinstance(compiled, XlaCompiled):
            return 1
        if self.jit_compile:
            return len(compiled.shapes)
        return int(compiled.fn.experimental_get_tracing_count())


class XlaCompiled:
    """A TF graph's tf.function and the distinct input shapes it was called with (XLA's compiles)."""

    def __init__(self, graph, fn):
        self.graph, self.fn, self.shapes = graph, fn, set()

    def call(self, xs: list):
        self.shapes.add(tuple(tuple(int(d) for d in x.shape) for x in xs))
        return self.fn(*xs)


class XlaGpuBackend(XlaCpuBackend):
    name = "xla-gpu"
    device = "gpu"

    @classmethod
    def check_available(cls) -> None:
        super().check_available()
        import tensorflow as tf

        if not tf.config.list_physical_devices("GPU"):
            raise BackendUnavailable("xla-gpu needs TensorFlow with CUDA and an NVIDIA GPU, but "
                                     "tf.config.list_physical_devices('GPU') is empty here (tensorflow-cpu, or no "
                                     "GPU); install `tensorflow[and-cuda]` on a GPU machine, or use backend=xla-cpu")
