"""TFLite: the TF model converted with the TFLite converter (builtin ops only) and run by the LiteRT
interpreter (``ai-edge-litert``; ``tf.lite.Interpreter`` is deprecated)."""
from __future__ import annotations

from functools import partial
from typing import Dict, Optional

import numpy as np

from nnfuzz.backends import tf_knowledge
from nnfuzz.backends.base import worker_threads
from nnfuzz.backends.tf import _TfBackend


# backend.options.quantize: "none" (float32 conversion, compared with TF eager) or "int8" (full-integer
# conversion, judged in quantization steps: backends/tflite_int8.py, docs/quantization.md)
QUANTIZE = ("none", "int8")


class TfliteBackend(_TfBackend):
    name = "tflite-cpu"
    engine = "tflite"
    reference = "tf-cpu"
    known = _TfBackend.known + tf_knowledge.KNOWN_TFLITE
    repro_gir = tf_knowledge.REPRO_TFLITE
    # a dynamic model is converted once from the tf.function with None dims (the flatbuffer's inputs have
    # shape_signature -1 there); the signature runner resizes the inputs and allocates the tensors at each
    # shape (docs/dynamic-shapes.md)
    dynamic_forms = ("tf",)
    issue_template = staticmethod(partial(tf_knowledge.issue, part="the TFLite converter / LiteRT interpreter"))

    def __init__(self, quantize: str = "none", **options):
        super().__init__(quantize=quantize, **options)
        self.choice("quantize", quantize, QUANTIZE)
        self.quantize = quantize

    @classmethod
    def dynamic_forms_for(cls, options) -> tuple:
        return () if (options or {}).get("quantize", "none") != "none" else tuple(cls.dynamic_forms)

    @classmethod
    def oracle_for(cls, options) -> Optional[str]:
        # quantize=int8: the int8 oracle (oracles/int8.py) judges in quantization steps
        return "int8" if (options or {}).get("quantize", "none") == "int8" else None

    @classmethod
    def probe_variant(cls, options) -> str:
        quantize = (options or {}).get("quantize", "none")
        return "" if quantize == "none" else f"quantize={quantize}"

    @classmethod
    def check_available(cls) -> None:
        super().check_available()
        cls.require("ai_edge_litert.interpreter", "the LiteRT interpreter", "pip install ai-edge-litert")

    @property
    def version_id(self) -> str:
        import importlib.metadata

        return f"tf {self._tf.version.GIT_VERSION}, ai-edge-litert {importlib.metadata.version('ai-edge-litert')}"

    def compile(self, payload: bytes):
        from ai_edge_litert.interpreter import Interpreter

        graph = self._graph(payload)
        module = graph.module()
        if self.quantize == "int8":  # converted in run(): its representative dataset is the test's inputs
            from nnfuzz.materialize.portable import unpack

            return graph, module, unpack(payload)[1]
        concrete = module.__call__.get_concrete_function()
        converter = self._tf.lite.TFLiteConverter.from_concrete_functions([concrete], module)
        converter.target_spec.supported_ops = [self._tf.lite.OpsSet.TFLITE_BUILTINS]
        flatbuffer = converter.convert()
        interp = Interpreter(model_content=flatbuffer, num_threads=worker_threads())
        runner = interp.get_signature_runner()
        return graph, runner, _output_names(graph.gir.outputs)

    def run(self, compiled, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        if self.quantize == "int8":
            return self._run_int8(*compiled, inputs)
        graph, runner, names = compiled
        feed = {i: np.asarray(inputs[i], dtype=graph.gir.vars[i].dtype.numpy(), order="C") for i in graph.gir.inputs}
        out = runner(**feed)  # (it resizes each input to its array's shape and allocates the tensors first)
        return {ours: np.asarray(out[theirs]) for theirs, ours in names.items()}

    def _run_int8(self, graph, module, weights, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """The full-integer model's int8 outputs and the int8 oracle's record (backends/tflite_int8.py)."""
        from ai_edge_litert.interpreter import Interpreter

        from nnfuzz.backends import tflite_int8

        flatbuffer = tflite_int8.convert(self._tf, module, graph.gir, inputs)
        interp = Interpreter(model_content=flatbuffer, num_threads=worker_threads())
        return tflite_int8.run(interp, graph.gir, weights, inputs)


def _output_names(ours) -> Dict[str, str]:
    """The converter names a list of outputs output_0, output_1, ...: map them to the GraphIR's names."""
    return {f"output_{k}": name for k, name in enumerate(ours)}
