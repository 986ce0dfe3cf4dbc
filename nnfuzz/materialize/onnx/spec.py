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
    direct path may raise it, within ``opsets``, when a node needs a newer one); None in a campaign's
    template: each model draws one from ``opsets`` (``for_model``). ``spelling``: "random" draws each
    node's spelling from ``seed`` and the node; "canonical" writes the plainest one."""

    via: str = "onnx"
    opset: Optional[int] = 17
    spelling: str = "random"
    seed: int = 0
    opsets: Optional[Tuple[int, int]] = None   # the range an opset may move in (None: the opset alone)
    timeout_s: float = 30.0
    # (op, key, choice): spellings not drawn for that op while another choice exists (known bugs' triggers,
    # generate/steer.py); recorded in meta.json's export so that a replay writes the same model
    avoid: Tuple[Tuple[str, str, str], ...] = ()

    def __post_init__(self):
        if self.via not in VIAS:
            raise ConfigError(f"export.via={self.via!r}; valid choices: {list(VIAS)}")
        if self.spelling not in SPELLINGS:
            raise ConfigError(f"export.spelling={self.spelling!r}; valid choices: {list(SPELLINGS)}")
        if self.opset is not None and (isinstance(self.opset, bool) or not isinstance(self.opset, int)
                                       or not FIRST_OPSET <= self.opset <= newest_opset()):
            raise ConfigError(f"export.opset={self.opset!r}; nnfuzz writes opsets {FIRST_OPSET}..{newest_opset()}, "
                              "or null to draw one per model from those the backend reads")
        if self.via == "torch" and self.opset is None:
            raise ConfigError("export.via=torch writes one opset: set export.opset (17 is torch's usual one)")

    @property
    def range(self) -> Tuple[int, int]:
        return self.opsets or (self.opset, self.opset)

    def for_model(self, seed: int) -> "ExportSpec":
        """The spec of the model made from ``seed``: its spellings drawn from ``seed``, and its opset
        too when the template leaves it open (None), from ``opsets``."""
        if self.opset is not None:
            return dataclasses.replace(self, seed=seed)
        import numpy as np

        lo, hi = self.opsets or (FIRST_OPSET, newest_opset())
        opset = int(np.random.default_rng([seed & 0xFFFFFFFF, 13]).integers(lo, hi + 1))
        return dataclasses.replace(self, seed=seed, opset=opset, opsets=(lo, hi))

    def at(self, opset: int) -> "ExportSpec":
        return dataclasses.replace(self, opset=opset)

    def to_json(self) -> dict:
        return {"via": self.via, "opset": self.opset, "spelling": self.spelling, "seed": self.seed,
                **({"avoid": [list(a) for a in self.avoid]} if self.avoid else {})}

    def record(self, spellings: dict) -> dict:
        """meta.json's ``export``: this spec and the spellings drawn per node ({var: {key: choice}})."""
        return {**self.to_json(), "spellings": spellings}

    @classmethod
    def from_json(cls, d: dict) -> "ExportSpec":
        """From meta.json's ``export``; a malformed one is a ConfigError that shows it."""
        try:
            avoid = tuple(tuple(str(x) for x in a) for a in d.get("avoid") or ())
            if any(len(a) != 3 for a in avoid):
                raise ValueError(f"avoid={d.get('avoid')!r} must list [op, key, choice] triples")
            return cls(via=d.get("via", "torch"), opset=int(d.get("opset", 17)),
                       spelling=d.get("spelling", "canonical"), seed=int(d.get("seed", 0)), avoid=avoid)
        except (AttributeError, TypeError, ValueError) as e:
            raise ConfigError(f"export record {d!r} is malformed ({e})") from None
