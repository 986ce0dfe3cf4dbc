"""GenPolicy: every knob of graph generation in one typed, validated dataclass (config group `mgen`).

Each knob's meaning is written once, next to its default in conf/mgen/default.yaml (shown by
`nnfuzz generate --help`)."""
from __future__ import annotations

import dataclasses
import difflib
import secrets
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from nnfuzz.abstract.dtype import DType
from nnfuzz.errors import ConfigError

SEED_RANGE = 2 ** 31   # drawn seeds are below this (any seed >= 0 may be given)
GUIDES = ("coverage", "none")  # mgen.guide


@dataclass
class GenPolicy:
    seed: Optional[int] = 0  # None (mgen.seed=null): drawn per run by with_concrete_seed()
    max_nodes: int = 10
    max_rank: int = 5
    max_elems: int = 4096
    dtypes: List[str] = field(default_factory=lambda: [d.value for d in DType])
    include: List[str] = field(default_factory=list)
    exclude: List[str] = field(default_factory=list)
    include_modules: List[str] = field(default_factory=list)
    op_weights: Dict[str, float] = field(default_factory=dict)
    binning: bool = True
    value_ranges: bool = True
    forward_prob: float = 0.6
    reuse_prob: float = 0.5
    weight_prob: float = 0.3
    guesses: int = 6
    solver_timeout_ms: int = 100
    graph_timeout_s: float = 10.0
    max_attempts: int = 40
    guide: str = "coverage"  # coverage | none (generate/guide.py)
    guide_bugs: bool = True  # under guide=coverage: down-weight known bugs' triggers
    quantized: Optional[float] = None  # the share of QDQ graphs (generate/qdq.py); None: the systems' default
    invalid: float = 0.0  # disruptive mode: the fraction of models made to break one rule (materialize/onnx/invalid.py)

    def __post_init__(self):
        if self.seed is not None:
            _check_int(self, "seed", lo=0)
        _check_int(self, "max_nodes", lo=1)
        _check_int(self, "max_rank", lo=0, hi=5)
        _check_int(self, "max_elems", lo=1)
        _check_int(self, "guesses", lo=0)
        _check_int(self, "solver_timeout_ms", lo=1)
        _check_int(self, "max_attempts", lo=1)
        for name in ("forward_prob", "reuse_prob", "weight_prob", "invalid"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
                raise ConfigError(f"mgen.{name}={v!r} must be a probability in [0, 1]")
        q = self.quantized
        if q is not None and (isinstance(q, bool) or not isinstance(q, (int, float)) or not 0.0 <= q <= 1.0):
            raise ConfigError(f"mgen.quantized={q!r} must be a share in [0, 1], or null for the systems' default "
                              "(0.3 on ort-cpu, openvino-cpu and tvm-cpu, 0 elsewhere)")
        if not isinstance(self.graph_timeout_s, (int, float)) or self.graph_timeout_s <= 0:
            raise ConfigError(f"mgen.graph_timeout_s={self.graph_timeout_s!r} must be a positive number of seconds")
        for key in ("binning", "value_ranges", "guide_bugs"):
            if not isinstance(getattr(self, key), bool):
                raise ConfigError(f"mgen.{key}={getattr(self, key)!r} must be true or false")
        if self.guide not in GUIDES:
            raise ConfigError(f"mgen.guide={self.guide!r} is not a guidance mode; valid: {list(GUIDES)} "
                              "(coverage: bias op choice toward uncovered combinations; none: unguided)")
        self.dtypes = list(self.dtypes)
        valid = [d.value for d in DType]
        for d in self.dtypes:
            if d not in valid:
                raise ConfigError(f"mgen.dtypes has unknown dtype {d!r}; valid choices: {valid}")
        if not self.dtypes:
            raise ConfigError(f"mgen.dtypes is empty; pick from {valid}")
        for name in ("include", "exclude", "include_modules"):
            setattr(self, name, [str(x) for x in getattr(self, name)])
        self.op_weights = {str(k): float(v) for k, v in dict(self.op_weights or {}).items()}
        for k, v in self.op_weights.items():
            if v < 0:
                raise ConfigError(f"mgen.op_weights.{k}={v} must be >= 0")

    def with_concrete_seed(self) -> "GenPolicy":
        """This policy with a seed to generate from: its own, or (seed None) a fresh one drawn from the
        OS, so that two campaigns with default settings test different graphs."""
        if self.seed is not None:
            return self
        return dataclasses.replace(self, seed=secrets.randbelow(SEED_RANGE))

    @property
    def dtype_set(self) -> frozenset:
        return frozenset(DType(d) for d in self.dtypes)

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "GenPolicy":
        known = [f.name for f in dataclasses.fields(cls)]
        for k in data:
            if k not in known:
                near = difflib.get_close_matches(k, known, n=1)
                hint = f" (did you mean mgen.{near[0]}?)" if near else ""
                raise ConfigError(f"unknown key mgen.{k}{hint}; valid keys: {known}")
        return cls(**dict(data))


def _check_int(p, name, lo=None, hi=None):
    v = getattr(p, name)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ConfigError(f"mgen.{name}={v!r} must be an integer")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ConfigError(f"mgen.{name}={v} is out of range; valid: {rng}")
