"""The Backend contract: compile and run a model file; say what is missing when it cannot run."""
from __future__ import annotations

from typing import ClassVar, Dict, Optional, Tuple

import numpy as np

from nnfuzz.errors import NNFuzzError


class BackendUnavailable(NNFuzzError):
    """The backend cannot run on this machine (package missing, no GPU, ...); says what is missing."""


class Backend:
    name: ClassVar[str]            # "ort-cpu"
    system: ClassVar[str]          # "ort"
    device: ClassVar[str]          # "cpu" | "gpu"
    # What compile() receives: "onnx" (ONNX bytes) or "gir" (a nnfuzz.materialize.portable payload: the
    # GraphIR and weights, for systems that build the model themselves, like torch.compile and TF).
    formats: ClassVar[Tuple[str, ...]] = ("onnx",)
    # Which lowerings the system's models are built from: "torch" (ONNX is exported from torch) or "tf";
    # ops without such a lowering are not offered to it.
    lowering: ClassVar[str] = "torch"
    # The backend whose outputs are this system's reference, when torch eager is not (TF systems: TF eager).
    reference: ClassVar[Optional[str]] = None
    # 32 for a system that computes int64 in 32 bits without saying so (OpenVINO's CPU plugin): the value
    # search then keeps int64 values within int32, so the wrap-around is never reported as a bug.
    int64_bits: ClassVar[int] = 64
    # Options that turn the system's optimisations off, for the optlevel oracle (None: it has no such switch).
    unoptimized: ClassVar[Optional[Dict]] = None

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

    @classmethod
    def require(cls, module: str, what: str, install: str) -> None:
        """Import ``module`` or raise BackendUnavailable: ``<name> needs <what> (<error>); install it with ...``."""
        import importlib

        try:
            importlib.import_module(module)
        except ImportError as e:
            raise BackendUnavailable(f"{cls.name} needs {what} ({e}); install it with `{install}`") from None

    def warm_up(self) -> None:
        """One-off costs of a fresh process (a first compile), paid by the sandbox worker while it starts
        rather than by the first model's test_timeout. Not called where only the version is wanted."""

    @property
    def version(self) -> str:
        raise NotImplementedError

    @property
    def version_id(self) -> str:
        """A git hash or build string where the system exposes one, else the version."""
        return self.version

    def compile(self, model_bytes: bytes):
        """Compile a model (ONNX bytes, or a portable GraphIR payload for "gir" backends); return whatever
        ``run`` needs."""
        raise NotImplementedError

    def run(self, compiled, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        raise NotImplementedError
