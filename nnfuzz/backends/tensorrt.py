"""NVIDIA TensorRT 10: ONNX bytes -> OnnxParser -> Builder.build_serialized_network -> engine; runs with
the name-based tensor API (set_input_shape / set_tensor_address / execute_async_v3) on buffers that are
torch CUDA tensors (torch is always installed; no pycuda or cuda-python needed).

Builds are float32 by default with TF32 off (TensorRT allows TF32 in float32 convolutions and matmuls
by default, which a float32 reference would report as wrong values on Ampere and later GPUs).
"""
from __future__ import annotations

from typing import Dict

import numpy as np

from nnfuzz.backends import tensorrt_knowledge
from nnfuzz.backends.base import Backend, BackendUnavailable

PRECISIONS = ("f32", "tf32", "f16")
F64_MESSAGE = ("trt-gpu does not compute in float64: TensorRT has no float64 type, so this model's float64 "
               "inputs or outputs cannot be checked")


class TensorRtBackend(Backend):
    name = "trt-gpu"
    engine = "trt"
    device = "gpu"
    known = tensorrt_knowledge.KNOWN
    unoptimized = None  # builder_optimization_level 0 still fuses layers: no switch turns optimisation off

    def __init__(self, precision: str = "f32", **options):
        super().__init__(precision=precision, **options)
        self.choice("precision", precision, PRECISIONS)
        import tensorrt as trt
        import torch

        self._trt, self._torch = trt, torch
        self.precision = precision
        self.logger = _logger(trt)
        self.runtime = trt.Runtime(self.logger)
        self.stream = torch.cuda.Stream()

    @classmethod
    def check_available(cls) -> None:
        missing = []
        try:
            import tensorrt  # noqa: F401
        except (ImportError, OSError) as e:  # OSError: the package is there, its libraries are not
            missing.append(f"the tensorrt package ({e}; install it with `pip install tensorrt`, which needs an "
                           "NVIDIA GPU with a CUDA driver)")
        try:
            import torch
        except ImportError as e:
            missing.append(f"torch for the GPU buffers ({e})")
        else:
            if not torch.cuda.is_available():
                missing.append("a CUDA GPU that torch can use (torch.cuda.is_available() is False: "
                               + ("this torch is a CPU-only build)" if torch.version.cuda is None
                                  else "no GPU or no driver)"))
        if missing:
            raise BackendUnavailable("trt-gpu needs " + " and ".join(missing) + "; without them, use a CPU "
                                     "backend here (ort-cpu, openvino-cpu)")

    @property
    def version(self) -> str:
        return self._trt.__version__

    def compile(self, model_bytes: bytes):
        import onnx

        trt = self._trt
        graph = onnx.load_model_from_string(model_bytes).graph
        if any(v.type.tensor_type.elem_type == onnx.TensorProto.DOUBLE for v in [*graph.input, *graph.output]):
            raise RuntimeError(F64_MESSAGE)
        out_names = [o.name for o in graph.output]
        self.logger.errors.clear()
        builder = trt.Builder(self.logger)
        network = builder.create_network(0)  # TensorRT 10: every network is explicit-batch
        parser = trt.OnnxParser(network, self.logger)
        if not parser.parse(model_bytes):
            errors = [_parser_error(parser.get_error(i)) for i in range(parser.num_errors)]
            raise RuntimeError("TensorRT's ONNX parser rejected the model: " + " | ".join(errors or ["(no errors)"]))
        config = builder.create_builder_config()
        if self.precision != "tf32":
            config.clear_flag(trt.BuilderFlag.TF32)
        if self.precision == "f16":
            config.set_flag(trt.BuilderFlag.FP16)
        serialized = builder.build_serialized_network(network, config)
        if serialized is None:
            raise RuntimeError("TensorRT could not build the engine: " + self.logger.text())
        engine = self.runtime.deserialize_cuda_engine(serialized)
        if engine is None:
            raise RuntimeError("TensorRT could not load the engine it built: " + self.logger.text())
        context = engine.create_execution_context()
        if context is None:
            raise RuntimeError("TensorRT could not create an execution context: " + self.logger.text())
        return engine, context, out_names

    def run(self, compiled, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        from nnfuzz.materialize.values import to_numpy

        trt, torch = self._trt, self._torch
        engine, context, out_names = compiled
        self.logger.errors.clear()
        names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
        keep = []  # every buffer stays referenced until the stream has finished
        for name in names:
            if engine.get_tensor_mode(name) != trt.TensorIOMode.INPUT:
                continue
            t = _torch_tensor(inputs[name])
            want = _torch_dtype(trt, engine.get_tensor_dtype(name))
            if t.dtype != want:
                raise RuntimeError(f"input {name} is {t.dtype}, the engine takes {want}")
            if not context.set_input_shape(name, tuple(t.shape)):
                raise RuntimeError(f"TensorRT rejected input shape {list(t.shape)} for {name}: {self.logger.text()}")
            buf, view = self._buffer(engine, name, tuple(t.shape), t.dtype)
            view.copy_(t)
            context.set_tensor_address(name, buf.data_ptr())
            keep.append(buf)
        outs = {}
        for name in names:
            if engine.get_tensor_mode(name) != trt.TensorIOMode.OUTPUT:
                continue
            shape = tuple(context.get_tensor_shape(name))
            if any(d < 0 for d in shape):
                raise RuntimeError(f"output {name} has a data-dependent shape {list(shape)}; this backend "
                                   "allocates outputs before running (no IOutputAllocator)")
            buf, view = self._buffer(engine, name, shape, _torch_dtype(trt, engine.get_tensor_dtype(name)))
            context.set_tensor_address(name, buf.data_ptr())
            keep.append(buf)
            outs[name] = view
        torch.cuda.current_stream().synchronize()  # the input copies ran on the current stream
        if not context.execute_async_v3(self.stream.cuda_stream):
            raise RuntimeError("TensorRT execute_async_v3 failed: " + self.logger.text())
        self.stream.synchronize()
        if self.logger.errors:
            raise RuntimeError("TensorRT reported errors while running: " + self.logger.text())
        return {n: to_numpy(outs[n].cpu()) for n in out_names if n in outs}

    def _buffer(self, engine, name, shape, dtype):
        """A buffer for tensor ``name`` where the engine wants it (device, or host for shape tensors), with
        at least one element (TensorRT wants a non-null address even for empty tensors), and its view."""
        torch = self._torch
        on_host = engine.get_tensor_location(name) == self._trt.TensorLocation.HOST
        n = int(np.prod(shape, dtype=np.int64))
        buf = torch.empty(max(n, 1), dtype=dtype, device="cpu" if on_host else "cuda")
        return buf, buf[:n].view(tuple(shape))


def _logger(trt):
    class Logger(trt.ILogger):
        """Keeps the errors of the current build or run, for the exception text."""

        def __init__(self):
            trt.ILogger.__init__(self)
            self.errors = []

        def log(self, severity, msg):
            if int(severity) <= int(trt.ILogger.Severity.ERROR):
                self.errors.append(str(msg))

        def text(self) -> str:
            return " | ".join(self.errors[-5:]) or "(TensorRT logged no error)"

    return Logger()


def _parser_error(err) -> str:
    where = ""
    name = getattr(err, "node_name", None)
    op = getattr(err, "node_operator", None)
    if name is not None and op is not None:
        where = f" [node {name()} ({op()})]"
    return f"{err.code()}: {err.desc()}{where}"


def _torch_dtype(trt, dt):
    import torch

    table = {"FLOAT": torch.float32, "HALF": torch.float16, "BF16": torch.bfloat16, "INT8": torch.int8,
             "UINT8": torch.uint8, "INT32": torch.int32, "INT64": torch.int64, "BOOL": torch.bool}
    for key, value in table.items():
        if getattr(trt.DataType, key, None) == dt:
            return value
    raise RuntimeError(f"TensorRT tensor type {dt} has no torch equivalent here")


def _torch_tensor(a: np.ndarray):
    from nnfuzz.abstract.dtype import DType
    from nnfuzz.materialize.values import to_torch

    return to_torch(a, DType.parse(str(a.dtype)))
