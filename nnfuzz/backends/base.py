"""The Backend contract: compile and run a model file; say what is missing when it cannot run."""
from __future__ import annotations

from typing import ClassVar, Dict, Tuple

import numpy as np

from nnfuzz.errors import NNFuzzError


class BackendUnavailable(NNFuzzError):
    """The backend cannot run on this machine (package missing, no GPU, ...); says what is missing."""


class Backend:
    name: ClassVar[str]            # "ort-cpu"
    system: ClassVar[str]          # "ort"
    device: ClassVar[str]          # "cpu" | "gpu"
    formats: ClassVar[Tuple[str, ...]] = ("onnx",)

    def __init__(self, **options):
        self.options = options

    @staticmethod
    def choice(key: str, value, choices) -> None:
        """Raise ConfigError showing ``backend.<key>=value`` and the valid choices unless it is one."""
        if value not in choices:
            from nnfuzz.errors import ConfigError

            raise ConfigError(f"backend.options.{key}={value!r}; valid choices: {list(choices)}")

    @classmethod
    def check_available(cls) -> None:
        """Raise BackendUnavailable saying what is missing and how to get it."""

    @property
    def version(self) -> str:
        raise NotImplementedError

    @property
    def version_id(self) -> str:
        """A git hash or build string where the system exposes one, else the version."""
        return self.version

    def compile(self, model_bytes: bytes):
        """Compile an ONNX model (bytes); return whatever ``run`` needs."""
        raise NotImplementedError

    def run(self, compiled, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        raise NotImplementedError
