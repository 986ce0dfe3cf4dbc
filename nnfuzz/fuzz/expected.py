"""The expected side of a test: which outputs a campaign compares the system under test with
(``oracle=...`` picks the test oracle, ``cmp.with=...`` a second system).

- ``reference`` (default): the framework's eager run: torch eager (computed with the model), or, for a
  system whose backend names another ``reference`` (the TF systems: ``tf-cpu``), that backend's outputs;
- ``optlevel``: the same system with its optimisations off (the backend's ``unoptimized`` options; for
  torch.compile, torch eager);
- ``devices``: the same system on the other device (``X-gpu`` against ``X-cpu``);
- ``cmp``: a second system on the same model (``cmp.with=openvino-cpu``);
- ``metamorphic``: the same system on a semantically equivalent rewrite of the model
  (materialize/onnx/rewrite/; judged by triage/judging.py's judge_rewrite; docs/oracles.md).
The expected side runs in a sandbox of its own; its outputs are what oracle.pkl stores as ``output``.
(Comparison and verdicts live in nnfuzz/verdict.py; the reference data in materialize/model.py.)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional

from nnfuzz.errors import ConfigError

KINDS = ("reference", "optlevel", "devices", "cmp", "metamorphic")
EAGER = "eager"  # Backend.unoptimized value: the unoptimised run is the framework's eager run


@dataclass
class ExpectedSide:
    """The test oracle ``kind`` and the system (with options) whose outputs are expected."""

    kind: str
    expected: Optional[str] = None          # backend of the expected side (None: torch eager, from the model)
    expected_options: Dict = field(default_factory=dict)

    def describe(self, backend: str) -> str:
        if self.kind == "metamorphic":
            return f"{backend} vs {backend} on a rewrite of the model (metamorphic)"
        return f"{backend} vs {self.expected or 'torch eager'} ({self.kind})"


def expected_side(kind: str, backend: str, options: Dict, cmp_with: Optional[str] = None) -> ExpectedSide:
    """The oracle for a campaign on ``backend``; a combination that cannot work is a ConfigError."""
    from nnfuzz.backends.registry import BACKENDS, backend_class

    if kind not in KINDS:
        raise ConfigError(f"oracle={kind!r} is unknown; choose one of {list(KINDS)} (cmp via cmp.with=<backend>)")
    cls = backend_class(backend)
    if cmp_with:
        if kind not in ("reference", "cmp"):
            raise ConfigError(f"oracle={kind} and cmp.with={cmp_with} both choose the expected side; use one")
        backend_class(cmp_with)
        if cmp_with == backend:
            raise ConfigError(f"cmp.with={cmp_with} is the backend under test itself; name another system "
                              f"(known: {sorted(BACKENDS)}), or use oracle=optlevel")
        return ExpectedSide("cmp", cmp_with)
    if kind == "cmp":
        raise ConfigError("oracle=cmp needs the second system: cmp.with=<backend>, e.g. cmp.with=openvino-cpu")
    if kind == "reference":
        return ExpectedSide("reference", cls.reference)
    if kind == "metamorphic":
        if "onnx" not in cls.formats:
            raise ConfigError(f"oracle=metamorphic rewrites ONNX models; {backend} takes {list(cls.formats)}: use an "
                              f"ONNX backend (ort-cpu, tvm-cpu, openvino-cpu, ...)")
        return ExpectedSide("metamorphic", None)
    if kind == "optlevel":
        off = cls.unoptimized
        if off is None:
            able = sorted(n for n in BACKENDS if backend_class(n).unoptimized is not None)
            raise ConfigError(f"oracle=optlevel: {backend} has no switch that turns its optimisations off; "
                              f"backends with one: {able}")
        if off == EAGER:
            return ExpectedSide("optlevel", None)
        return ExpectedSide("optlevel", backend, {**options, **off})
    system, _, device = backend.rpartition("-")
    other = f"{system}-{'cpu' if device == 'gpu' else 'gpu'}"
    if device not in ("cpu", "gpu") or other not in BACKENDS:
        raise ConfigError(f"oracle=devices needs a system with both a -cpu and a -gpu backend; {backend} has no "
                          f"{other}")
    return ExpectedSide("devices", other, dict(options))

