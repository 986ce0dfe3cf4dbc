"""A migrated test: the record every source produces, its meta.json ``migration`` entry (triage/meta.py
checks it when a folder is read), and its folder, written through the bug-folder writers
(triage/folder.py, triage/meta.py) so that ``load_bug`` reads it like any bug folder."""
from __future__ import annotations

import collections
import dataclasses
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

from nnfuzz.triage.meta import BugMeta, write_meta

# what each source (triage/meta.py's MIGRATION_SOURCES) takes its expected outputs from (meta.json's
# oracle.expected.system)
EXPECTED_BY = {"onnx-node": "onnx-node-test", "torch-opinfo": "torch-eager"}


class Dropped(Exception):
    """A library test that does not become a migrated test; ``reason`` is the counted key in the summary."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail


@dataclasses.dataclass
class MigratedTest:
    source: str                          # one of MIGRATION_SOURCES
    test: str                            # the source's name for it: "test_abs", "nn.functional.relu[float32]#0"
    operator: str                        # the operator signature: an ONNX op type or an OpInfo name
    attributes: Dict[str, Any]           # its parameter settings, as JSON values (attribute_json)
    model_bytes: bytes
    inputs: Dict[str, np.ndarray]        # fed to the model, by graph input name
    outputs: Dict[str, np.ndarray]       # the source library's expected outputs, by graph output name
    opset: int
    nodes: int = 1
    library: Dict[str, str] = dataclasses.field(default_factory=dict)   # name, version of the source

    @property
    def undefined(self) -> bool:
        """NaN/Inf in an expected output: undefined behaviour, kept for crashes and never compared."""
        return any(a.dtype.kind in "fc" and not np.isfinite(a).all() for a in self.outputs.values())

    def record(self) -> dict:
        """meta.json's ``migration`` entry."""
        return {"source": self.source, "test": self.test, "operator": self.operator,
                "attributes": self.attributes, "inputs": [tensor_record(n, a) for n, a in self.inputs.items()],
                "outputs": [tensor_record(n, a) for n, a in self.outputs.items()], "nodes": self.nodes,
                "undefined": self.undefined, "library": self.library}


def tensor_record(name: str, a: np.ndarray) -> dict:
    return {"name": name, "dtype": str(a.dtype), "shape": [int(d) for d in a.shape]}


def nnfuzz_dtype(a: np.ndarray, what: str):
    """The nnfuzz DType of ``a``; a dtype nnfuzz does not test (uint32, float8, strings) drops the test."""
    from nnfuzz.abstract.dtype import DType

    try:
        return DType(str(a.dtype))
    except ValueError:
        raise Dropped("dtype-outside-nnfuzz", f"{what} has dtype {a.dtype}") from None


def attribute_json(value) -> Any:
    """A parameter value as JSON: numbers, strings and lists as they are; a tensor as its dtype and shape;
    anything else as its type and repr (enough to partition it, never to rebuild it)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (np.bool_, np.integer, np.floating)):
        return value.item()
    if isinstance(value, np.ndarray):
        return {"tensor": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, (list, tuple)):
        return [attribute_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): attribute_json(v) for k, v in value.items()}
    if hasattr(value, "dtype") and hasattr(value, "shape"):  # a torch tensor
        return {"tensor": str(value.dtype).replace("torch.", ""), "shape": [int(d) for d in value.shape]}
    if type(value).__module__ == "torch" and type(value).__name__ in ("dtype", "memory_format", "layout", "device"):
        return str(value).replace("torch.", "")
    return {"type": type(value).__name__, "repr": repr(value)[:80]}


def migrated_meta(t: MigratedTest):
    """The folder's BugMeta: no system has run it yet (``system`` empty); ``oracle.expected`` names the library."""
    import nnfuzz

    expected = {"system": EXPECTED_BY[t.source], "version": t.library.get("version"), "options": {}}
    return BugMeta(system="", symptom="", summary=f"migrated from {t.source} test {t.test}",
                   nodes=t.nodes, ops=[t.operator], nnfuzz=nnfuzz.__version__, opset=t.opset, format="onnx",
                   oracle={"kind": "reference", "expected": expected}, migration=t.record())


def write_migrated(dest: Path, t: MigratedTest) -> Path:
    """``dest/`` with model.onnx, oracle.pkl (inputs; expected outputs, None when undefined) and meta.json."""
    from nnfuzz.triage.folder import dump_oracle, write_bytes, write_folder_atomic

    oracle = {"input": dict(t.inputs), "output": None if t.undefined else dict(t.outputs)}
    return write_folder_atomic(dest, {
        "model.onnx": write_bytes(t.model_bytes),
        "oracle.pkl": write_bytes(dump_oracle(oracle)),
        "meta.json": write_meta(migrated_meta(t)),
    })


@dataclasses.dataclass
class Tally:
    """Per source: tests collected, migrated (of which undefined), dropped by reason."""
    source: str
    collected: int = 0
    migrated: int = 0
    undefined: int = 0
    dropped: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    def to_json(self) -> dict:
        return {"source": self.source, "collected": self.collected, "migrated": self.migrated,
                "undefined": self.undefined, "dropped": dict(sorted(self.dropped.items()))}


def folder_name(test: str, taken: set) -> str:
    """A file-system-safe, unique folder name for ``test``."""
    import re

    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", test).strip("._") or "test"
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def tensors_of(names: List[str], arrays) -> Dict[str, np.ndarray]:
    return {n: np.asarray(a) for n, a in zip(names, arrays)}
