"""Backends by name (``<engine>-<device>``, the system meta.json records), loaded lazily."""
from __future__ import annotations

import importlib

from nnfuzz.errors import ConfigError

BACKENDS = {
    "ort-cpu": "nnfuzz.backends.ort:OrtBackend",
    "tvm-cpu": "nnfuzz.backends.tvm:TvmCpuBackend",
    "tvm-gpu": "nnfuzz.backends.tvm:TvmGpuBackend",
    "ort-gpu": "nnfuzz.backends.ort:OrtGpuBackend",
    "openvino-cpu": "nnfuzz.backends.openvino:OpenVinoBackend",
    "inductor-cpu": "nnfuzz.backends.inductor:InductorCpuBackend",
    "inductor-gpu": "nnfuzz.backends.inductor:InductorGpuBackend",
    "trt-gpu": "nnfuzz.backends.tensorrt:TensorRtBackend",
    "tf-cpu": "nnfuzz.backends.tf:TfEagerBackend",
    "xla-cpu": "nnfuzz.backends.tf:XlaCpuBackend",
    "xla-gpu": "nnfuzz.backends.tf:XlaGpuBackend",
    "tflite-cpu": "nnfuzz.backends.tflite:TfliteBackend",
}


def backend_class(name: str):
    try:
        target = BACKENDS[name]
    except KeyError:
        raise ConfigError(f"backend={name!r} is unknown; known backends: {sorted(BACKENDS)}") from None
    mod, cls = target.split(":")
    return getattr(importlib.import_module(mod), cls)


def get_backend(name: str, **options):
    """An instance of backend ``name``; raises BackendUnavailable if it cannot run on this machine."""
    cls = backend_class(name)
    cls.check_available()
    return cls(**options)
