"""ExportSpec: how one model becomes an ONNX file (the record meta.json keeps as ``export``)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional, Tuple

from nnfuzz.errors import ConfigError

VIAS = ("onnx", "torch")
SPELLINGS = ("random", "canonical")
FIRST_OPSET = 13  # the oldest opset nnfuzz writes


def newest_opset() -> int:
    """The newest opset the installed ``onnx`` package knows."""
    from onnx import defs

    return defs.onnx_opset_version()


@dataclass(frozen=True)
class ExportSpec:
    """``via``: "onnx" builds the ONNX graph directly from the GraphIR (materialize/onnx/direct.py);
    "torch" exports the torch module with the TorchScript exporter. ``opset``: the model's opset (the
    direct path may raise it, within ``opsets``, when a node needs a newer one). ``spelling``: "random"
    draws each node's spelling from ``seed`` and the node; "canonical" writes the plainest one."""

    via: str = "onnx"
    opset: int = 17
    spelling: str = "random"
    seed: int = 0
    opsets: Optional[Tuple[int, int]] = None   # the range an opset may move in (None: the opset alone)
    timeout_s: float = 30.0

    def __post_init__(self):
        if self.via not in VIAS:
            raise ConfigError(f"export.via={self.via!r}; valid choices: {list(VIAS)}")
        if self.spelling not in SPELLINGS:
            raise ConfigError(f"export.spelling={self.spelling!r}; valid choices: {list(SPELLINGS)}")
        if not isinstance(self.opset, int) or self.opset < FIRST_OPSET:
            raise ConfigError(f"export.opset={self.opset!r}; nnfuzz writes opsets {FIRST_OPSET}..{newest_opset()}")

    @property
    def range(self) -> Tuple[int, int]:
        return self.opsets or (self.opset, self.opset)

    def at(self, opset: int) -> "ExportSpec":
        return dataclasses.replace(self, opset=opset)

    def to_json(self) -> dict:
        return {"via": self.via, "opset": self.opset, "spelling": self.spelling, "seed": self.seed}

    @classmethod
    def from_json(cls, d: dict) -> "ExportSpec":
        return cls(via=d.get("via", "torch"), opset=int(d.get("opset", 17)),
                   spelling=d.get("spelling", "canonical"), seed=int(d.get("seed", 0)))
