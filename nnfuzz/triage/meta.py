"""``BugMeta``: the one schema of a bug folder's meta.json (docs/bug-format.md), written and read only
through this module.

``schema`` is the version of this layout. Folders written before it had a version (no ``schema`` key)
read as schema 1; a folder from a newer nnfuzz (a higher version) is refused with a BugFolderError that
names the version this nnfuzz reads. Keys this version does not know (a hand-edited folder, an older
layout) are kept in ``extra`` and written back unchanged.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Dict, List, Optional

from nnfuzz.triage.folder import BugFolderError

SCHEMA_VERSION = 7   # 1: before the schema key (no float64_twin); 2: schema, float64_twin; 3: export; 4: migration;
# 5: rewrite (metamorphic oracle, with model_rewrite.onnx) and invalid (disruptive mode); 6: root_cause; 7: grad
REQUIRED = ("system", "version", "symptom", "version_id")
MIGRATION_SOURCES = ("onnx-node", "torch-opinfo")  # the library-test sources `nnfuzz migrate` reads


@dataclasses.dataclass
class BugMeta:
    system: str = ""                        # the system the bug is in, e.g. "ort-cpu" (a backend name)
    version: Optional[str] = None           # its package version
    symptom: str = ""                       # crash | inconsistency | timeout (verdict.Symptom)
    version_id: Optional[str] = None        # its git hash or build string
    stage: Optional[str] = None             # export | compile | execute | verify (verdict.Stage)
    seed: Optional[int] = None              # the generator seed of the graph
    flaky: bool = False                     # the re-run gave another verdict
    summary: str = ""                       # one line (err.log holds the full text)
    errors: Dict[str, dict] = dataclasses.field(default_factory=dict)  # per-output error figures
    nodes: Optional[int] = None
    ops: Optional[List[str]] = None
    nnfuzz: Optional[str] = None            # the nnfuzz version that saved it
    backend_options: Dict[str, Any] = dataclasses.field(default_factory=dict)
    policy: Optional[dict] = None           # the generation policy (GenPolicy as a dict)
    opset: int = 17                         # the model's ONNX opset (also in ``export``)
    # how the model was written: via (onnx | torch), opset, spelling, seed, and the spellings drawn per
    # node ({var: {key: choice}}); folders of schema < 3 were all exported by torch
    export: Optional[dict] = None
    timings: Dict[str, float] = dataclasses.field(default_factory=dict)
    signal: Optional[int] = None            # the signal number that killed the worker (crashes)
    search: Optional[dict] = None           # the value search's summary
    format: str = "onnx"                    # of the model file: "onnx" (model.onnx) or "gir" (model.gir)
    oracle: Optional[dict] = None           # the test oracle: kind, side, under_test, expected
    first_divergent_node: Optional[dict] = None   # inconsistencies: triage/localize.py
    blame: Optional[str] = None
    localization_note: Optional[str] = None
    float64_twin: Optional[dict] = None     # inconsistencies: {"available": bool, "note": why not}
    # the node the fault is in (triage/local_error.py): op, dtype, kind (shape | dtype | values | non-finite |
    # precision | missing), index, var, ulps (its own error), budget, and method: "local-error" (each node
    # judged on the system's own inputs) or "first-divergence" (exposing the values changed the result)
    root_cause: Optional[dict] = None
    signature: Optional[str] = None         # triage/dedup.py
    duplicate_of: Optional[str] = None      # the first folder with the same signature
    reduced: Optional[dict] = None          # nnfuzz reduce: nodes/elements before and after, trials, seconds
    # a migrated library test (nnfuzz migrate; check_migration below): source, test, operator,
    # attributes, inputs and outputs (name, dtype, shape), undefined; such a model has no graph to rebuild
    migration: Optional[dict] = None
    # oracle=metamorphic: the rewrite of model.onnx saved as model_rewrite.onnx: seed, steps ([{kind, ...}]),
    # skipped, aliases ({extra output: the output it copies}), failed ("original" | "rewrite" | "pair": they
# disagree | null)
    rewrite: Optional[dict] = None
    # mgen.invalid: model.onnx breaks one rule on purpose: rule, op, node, change, checker (its message)
    invalid: Optional[dict] = None
    # oracle=grad: outputs and wrt (what was differentiated), upstream (oracle.pkl's inputs holding the upstream
    # gradients), gradients (its outputs holding the expected gradients), failed ("forward" | "backward" | null)
    grad: Optional[dict] = None
    # written by the user: what the bug is, in a sentence (the report shows it); optional, additive, no schema bump
    note: Optional[str] = None
    # when it was first seen: at (UTC, ISO 8601), campaign ({seed, started} of the campaign that saved it), t
    # (seconds into that campaign); kept folders saved before it: at and source (where the date comes from)
    found: Optional[dict] = None
    schema: int = SCHEMA_VERSION
    extra: Dict[str, Any] = dataclasses.field(default_factory=dict)  # keys this schema does not know

    def export_spec(self):
        """The ExportSpec that rebuilds this folder's model as it was written (BugFolderError if malformed)."""
        from nnfuzz.errors import ConfigError
        from nnfuzz.materialize.onnx.spec import ExportSpec

        if self.migration is not None and self.export is None:
            raise BugFolderError(f"this folder holds a migrated library test ({self.migration.get('test')!r}): its "
                                 f"model came from {self.migration.get('source')!r}, not from a graph nnfuzz rebuilds")
        try:
            return ExportSpec.from_json(self.export if isinstance(self.export, dict) else
                                        {"via": "torch", "opset": self.opset})
        except ConfigError as e:
            raise BugFolderError(f"meta.json: {e}") from None
        except Exception as e:  # noqa: BLE001 - whatever a hostile record makes the checks raise: refused
            raise BugFolderError(f"meta.json: export record {self.export!r} is malformed ({type(e).__name__}: {e})") from None

    def to_json(self) -> dict:
        """The meta.json object (``extra`` keys merged back in)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        return {**self.extra, **d}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1, default=str)

    def replace(self, **changes) -> "BugMeta":
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_json(cls, obj, where: str = "meta.json") -> "BugMeta":
        """Read a meta.json object; a malformed one or one of a newer schema is a BugFolderError."""
        if not isinstance(obj, dict):
            raise BugFolderError(f"{where} must hold a JSON object, got {type(obj).__name__}")
        schema = obj.get("schema", 1)
        if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
            raise BugFolderError(f"{where}: schema={schema!r} is not a schema version (1..{SCHEMA_VERSION})")
        if schema > SCHEMA_VERSION:
            raise BugFolderError(f"{where} has schema {schema}; this nnfuzz reads meta.json schema {SCHEMA_VERSION} "
                                 f"and older: upgrade nnfuzz to read this folder")
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        known = {k: v for k, v in obj.items() if k in names}
        meta = cls(**{**known, "schema": schema}, extra={k: v for k, v in obj.items() if k not in names})
        if meta.export is not None and not isinstance(meta.export, dict):
            raise BugFolderError(f"{where}: export={meta.export!r} must be an object (via, opset, spelling, seed)")
        if meta.rewrite is not None and not (isinstance(meta.rewrite, dict) and isinstance(meta.rewrite.get("steps"), list)
                                             and isinstance(meta.rewrite.get("aliases", {}), dict)):
            raise BugFolderError(f"{where}: rewrite={meta.rewrite!r} must be an object with steps (a list) and aliases")
        if meta.invalid is not None and not (isinstance(meta.invalid, dict) and isinstance(meta.invalid.get("rule"), str)):
            raise BugFolderError(f"{where}: invalid={meta.invalid!r} must be an object naming the rule the model breaks")
        if meta.grad is not None and not (isinstance(meta.grad, dict) and isinstance(meta.grad.get("outputs"), list)
                                          and isinstance(meta.grad.get("wrt"), list)):
            raise BugFolderError(f"{where}: grad={meta.grad!r} must be an object with outputs and wrt (lists of names)")
        if meta.note is not None and not isinstance(meta.note, str):
            raise BugFolderError(f"{where}: note={meta.note!r} must be a string (a sentence saying what the bug is)")
        if meta.found is not None and not (isinstance(meta.found, dict) and isinstance(meta.found.get("at"), str)):
            raise BugFolderError(f"{where}: found={meta.found!r} must be an object with 'at' (an ISO 8601 UTC time)")
        if meta.migration is not None:
            check_migration(meta.migration, where)
        if meta.migration is None or meta.export is not None:
            meta.export_spec()  # a malformed export record is refused here, not when a model is rebuilt
        return meta


def _bad_migration(where: str, what: str, value) -> BugFolderError:
    return BugFolderError(f"{where}: migration.{what} is {value!r}; re-run `nnfuzz migrate` to rewrite the folder")


def check_migration(rec, where: str = "meta.json") -> None:
    """Refuse a malformed ``migration`` entry (a BugFolderError naming the key and the value)."""
    if not isinstance(rec, dict):
        raise _bad_migration(where, "(the whole entry)", rec)
    if rec.get("source") not in MIGRATION_SOURCES:
        raise BugFolderError(f"{where}: migration.source={rec.get('source')!r}; "
                             f"valid sources: {list(MIGRATION_SOURCES)}")
    for key in ("test", "operator"):
        if not isinstance(rec.get(key), str) or not rec[key]:
            raise _bad_migration(where, key, rec.get(key))
    if not isinstance(rec.get("attributes", {}), dict):
        raise _bad_migration(where, "attributes", rec.get("attributes"))
    if not isinstance(rec.get("undefined", False), bool):
        raise _bad_migration(where, "undefined", rec.get("undefined"))
    for part in ("inputs", "outputs"):
        tensors = rec.get(part)
        if not isinstance(tensors, list):
            raise _bad_migration(where, part, tensors)
        for t in tensors:
            ok = (isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("dtype"), str)
                  and isinstance(t.get("shape"), list)
                  and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in t["shape"]))
            if not ok:
                raise _bad_migration(where, part, t)


def read_meta(path: Path, required=REQUIRED) -> BugMeta:
    """``path`` (a meta.json file) as a BugMeta; BugFolderError if it is unreadable, not JSON, lacks
    one of ``required`` or is of a newer schema."""
    try:
        obj = json.loads(Path(path).read_text())
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as e:  # RecursionError: nested too deep
        raise BugFolderError(f"{path} is not readable JSON: {type(e).__name__}: {e}") from e
    if isinstance(obj, dict) and any(k not in obj for k in required):
        raise BugFolderError(f"{path} must be an object with keys {list(required)}; it has {sorted(obj)}")
    return BugMeta.from_json(obj, str(path))


def write_meta(meta: BugMeta):
    """A folder writer (triage/folder.py) of ``meta`` as meta.json."""
    return lambda p: p.write_text(meta.dumps())
