"""Known bugs as data (docs/known-bugs.md): the root-cause signatures of bug folders kept in stores and
the entries of known-bugs files that users edit, what a campaign matches each new bug against, and the
triggers (op x dtype, spelling) it steers generation away from.

Two sources:
- **folders**: every bug folder of the repository's kept bugs (``bugs/kept/``, ``kept_store()``) and of
  each store or folder named by ``fuzz.known=[...]``. Each folder's signature is computed now with
  ``dedup.signature(meta, err.log)`` (not read from meta.json), so the known set follows the signature
  rules of this nnfuzz. A new bug matches a folder when its signature equals the folder's.
- **entries** of a known-bugs file (YAML; ``bugs/kept/known.yaml`` in the repository, plus
  ``fuzz.known_file=...``): system, op (one name or a list), dtype, kind, message (a regex searched in a
  crash's summary and err.log), spelling, note, link, steer. A new bug matches an entry when every field
  the entry gives matches (fields left out match anything): system; op, dtype and kind against the bug's
  ``root_cause`` (meta.json; an older folder without one: its first divergent node, kind from
  ``dedup.divergence``; a crash: the op its error names, kind ``crash`` or ``timeout``).
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from nnfuzz.errors import ConfigError
from nnfuzz.triage.static_check import AGAIN_TERM, DYNAMIC_TERM

KINDS = ("shape", "dtype", "values", "non-finite", "precision", "missing", "crash", "timeout")
FIELDS = ("system", "op", "dtype", "kind", "message", "spelling", "note", "link", "steer")
KNOWN_FILE = "known.yaml"   # the known-bugs file of a store (the repository's: bugs/kept/known.yaml)
_PY_FRAME = re.compile(r"[A-Za-z_]\w*\.(?:\w+|<\w+>)")  # a Python frame of a crash's stack (signal_crash.py)
SMALL = 2                   # a folder without a located root cause steers by its nodes when it has at most this many


@dataclasses.dataclass(frozen=True)
class Entry:
    """One entry of a known-bugs file."""
    where: str                               # "<file> entry <k>"
    system: Optional[str] = None
    ops: Optional[Tuple[str, ...]] = None
    dtypes: Optional[Tuple[str, ...]] = None
    kind: Optional[str] = None
    message: Optional[str] = None            # a regex
    spelling: Tuple[Tuple[str, str], ...] = ()  # (key, choice) the ONNX writer avoids for the entry's ops
    note: str = ""
    link: str = ""
    steer: bool = True

    def matches(self, system: str, cause: dict, text: str) -> bool:
        if self.system is not None and self.system != system:
            return False
        if self.ops is not None and cause.get("op") not in self.ops:
            return False
        if self.dtypes is not None and cause.get("dtype") not in self.dtypes:
            return False
        if self.kind is not None and cause.get("kind") != self.kind:
            return False
        return self.message is None or re.search(self.message, text) is not None

    @property
    def label(self) -> str:
        return self.where + (f" ({self.note})" if self.note else "")


@dataclasses.dataclass(frozen=True)
class Folder:
    """A known bug folder: its signature now, its system and its steering triggers."""
    path: str
    system: str
    signature: str
    triggers: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()   # (op, input dtypes) of the node(s) it is in
    variant: str = ""  # the options it ran under that change the system's kernels (Backend.probe_variant)


@dataclasses.dataclass(frozen=True)
class KnownBugs:
    folders: Tuple[Folder, ...] = ()
    entries: Tuple[Entry, ...] = ()
    unreadable: Tuple[str, ...] = ()          # folders of a known store that could not be read (shown, skipped)

    def folder_signatures(self) -> Dict[str, str]:
        """signature -> the first known folder with it; a folder whose signature says too little to be one
        root cause (``generic``) is left out, so it never hides a new bug."""
        out: Dict[str, str] = {}
        for f in self.folders:
            if not generic(f.signature):
                out.setdefault(f.signature, f.path)
        return out

    def match(self, meta, signature: str, err_log: str = "") -> Optional[str]:
        """What ``meta`` (a new bug, signed ``signature``) is known as: a kept folder's path or a file
        entry's label; None if it is not known."""
        hit = self.folder_signatures().get(signature) or self._on_sibling(meta, signature)
        if hit is not None:
            return hit
        if not self.entries:
            return None
        cause, text = bug_cause(meta, err_log), f"{meta.summary}\n{err_log}"
        return next((e.label for e in self.entries if e.matches(str(meta.system), cause, text)), None)

    def _on_sibling(self, meta, signature: str) -> Optional[str]:
        """A kept folder of the same system on another device (tvm-cpu for a tvm-gpu bug) whose signature is
        this one but for the system, where the bug is a crash while compiling: the system's device-independent
        part (TVM's ONNX frontend, dynamo's tracing) failing alike on both is one fault (H100 campaign: 10 of
        tvm-gpu's 18 folders were kept tvm-cpu frontend bugs, all signed "new"). Inconsistencies and crashes
        while running stay per device: their kernels are the device's own."""
        system = str(meta.system)
        if str(meta.symptom) != "crash" or str(meta.stage) != "compile" or not signature.startswith(system + " | "):
            return None
        engine, rest = system.rsplit("-", 1)[0], signature[len(system):]
        return next((f.path for f in self.folders if f.system != system and f.system.rsplit("-", 1)[0] == engine
                     and f.signature == f.system + rest and not generic(f.signature)), None)

    def triggers(self, system: str, variant: str = "") -> List[dict]:
        """The triggers of ``system``'s known bugs: {"bug", "op", "dtypes" (input row or None), "dtype"
        (any input or output of that dtype, or None), "spelling" ([(key, choice)])}. A folder steers only a
        campaign whose options run the same kernels (``variant``, Backend.probe_variant: tflite-cpu's int8
        DIV fault, bugs/kept/0107, is no reason to draw fewer float32 Divs)."""
        out = []
        linked = [e.link.rstrip("/") for e in self.entries if e.link]
        for f in self.folders:  # a folder an entry links to steers as that entry says
            if f.system == system and f.variant == variant and not any(link and f.path.endswith(link) for link in linked):
                out += [{"bug": f.path, "op": op, "dtypes": list(dts), "dtype": None, "spelling": []}
                        for op, dts in f.triggers if op not in QDQ_WRITTEN]
        for e in self.entries:  # an entry with a spelling and no op: that spelling of every op ("*")
            if e.steer and (e.ops or e.spelling) and e.system in (None, system):
                out += [{"bug": e.where, "op": op, "dtypes": None, "dtype": dt, "spelling": list(e.spelling)}
                        for op in (e.ops or ("*",)) for dt in (e.dtypes or (None,))]
        return out

    def __len__(self) -> int:
        return len(self.folders) + len(self.entries)


# The ops the QDQ writer puts around every quantized node (nnfuzz/generate/qdq.py): a kept bug whose node is
# one of them (bugs/kept/0091's Concat -> Q -> DQ -> Q) does not steer it, since leaving its float32 row out
# leaves QuantizeLinear out, and with it every QDQ graph of the campaign (both openvino-cpu campaigns of
# issue 27 drew none); a known-bugs file entry naming a dtype (16-bit pairs) still steers the types drawn.
QDQ_WRITTEN = ("QuantizeLinear", "DequantizeLinear")


def generic(signature: str) -> bool:
    """Whether a signature names no root cause: an inconsistency localized to no node (``unlocalized``,
    its summary alone; a dynamic form's, its divergence alone), or a crash known only by its signal that names no op (neither the op it localizes
    to, ``at X``, nor an op lowering on its stack, ``op family.function``: the system's entry frames alone,
    OpenVINO's ``compile_model``, are every compile crash's; triage/signal_crash.py). Item 7's
    campaigns of issue 26 found two new OpenVINO faults counted as kept bugs/kept/0034 through its
    ``unlocalized | ... values differ (int64)``."""
    parts = [p.strip() for p in signature.split("|")]
    if len(parts) > 2 and parts[1] == "inconsistency" and parts[2] == "unlocalized":
        return True
    if len(parts) == 4 and parts[1] == "inconsistency" and parts[2] in (DYNAMIC_TERM, AGAIN_TERM):
        return True  # a dynamic form's inconsistency localized to no node: "dynamic | values" (bugs/kept/0104)
    rest = [p for p in parts[3:] if p and p != "?"]
    return len(parts) > 2 and parts[1] == "crash" and any(p.startswith("killed by") for p in rest) \
        and not any(p.startswith(("at ", "op ")) for p in rest) \
        and all(p.startswith(("signal ", "killed by")) or _PY_FRAME.fullmatch(p) for p in rest)


def bug_cause(meta, err_log: str = "") -> dict:
    """The op, dtype and kind a file entry is matched against (see the module's docstring)."""
    from nnfuzz.triage.dedup import divergence

    rc = meta.root_cause if isinstance(meta.root_cause, dict) else None
    if meta.symptom in ("crash", "timeout"):
        if rc is None:
            from nnfuzz.triage.rootcause import root_cause

            return {"op": root_cause(str(meta.summary), err_log)[0] or None, "dtype": None, "kind": meta.symptom}
        return {"op": _op_name(rc.get("op")), "dtype": rc.get("dtype"), "kind": meta.symptom}
    if rc is not None:
        return {"op": _op_name(rc.get("op")), "dtype": rc.get("dtype"), "kind": rc.get("kind")}
    node = meta.first_divergent_node or {}
    kind = divergence(meta)
    return {"op": _op_name(node.get("op")), "dtype": node.get("dtype"),
            "kind": "missing" if kind == "missing output" else kind}


def _op_name(op) -> Optional[str]:
    return str(op).split("(")[0] if op else None


# ---- loading ---------------------------------------------------------------------------------------

def known_bugs_of(cc) -> KnownBugs:
    """A campaign's known bugs (its CampaignConfig's fuzz.known, known_file, known_kept): loaded once by
    fuzz/campaign.py ``settle`` (a bad path or file fails there, before any sandbox starts), or now for
    a config that was not settled."""
    if cc.known_bugs is not None:
        return cc.known_bugs
    return load_known(cc.known, [cc.known_file] if cc.known_file else [], cc.known_kept)


def load_known(stores: Iterable = (), files: Iterable = (), kept: bool = True) -> KnownBugs:
    """The known bugs of ``stores`` (bug stores or single bug folders) and known-bugs ``files``, plus
    (``kept``) the repository's kept bugs and their known.yaml. A path that does not exist, a folder that
    is not a store, a malformed file: a ConfigError that names it."""
    from nnfuzz.triage.bugstore import kept_store

    stores, files = [Path(s) for s in stores], [Path(f) for f in files]
    repo = kept_store() if kept else None
    if repo is not None:
        stores.insert(0, repo)
        if (repo / KNOWN_FILE).is_file():
            files.insert(0, repo / KNOWN_FILE)
    folders, unreadable = [], []
    for store in dict.fromkeys(p.resolve() for p in stores):
        for folder in _bug_folders(store):
            try:
                folders.append(_known_folder(folder))
            except Exception as e:  # noqa: BLE001 - BugFolderError and whatever a malformed folder raises: shown
                unreadable.append(f"{folder}: {type(e).__name__}: {e}")
    entries = [e for f in files for e in read_known_file(f)]
    return KnownBugs(tuple(folders), tuple(entries), tuple(unreadable))


def _bug_folders(path: Path) -> List[Path]:
    from nnfuzz.triage.bugstore import BUG_DIR

    if not path.exists():
        raise ConfigError(f"fuzz.known: {path} does not exist; name bug stores (folders of NNNN/ bug folders, "
                          "e.g. bugs/kept) or bug folders")
    if path.is_dir() and (path / "meta.json").is_file():
        return [path]
    found = sorted(p for p in path.iterdir() if p.is_dir() and BUG_DIR.match(p.name)) if path.is_dir() else []
    if not found:
        raise ConfigError(f"fuzz.known: {path} is not a bug store (it holds no NNNN/ bug folder) nor a bug folder "
                          "(no meta.json); name a folder a campaign wrote (fuzz.out) or one of its bug folders")
    return found


def _known_folder(folder: Path) -> Folder:
    from nnfuzz.triage.bugstore import read_err_log
    from nnfuzz.triage.dedup import signature
    from nnfuzz.triage.meta import read_meta

    meta = read_meta(folder / "meta.json")
    err = read_err_log(folder)
    return Folder(_short(folder), str(meta.system), signature(meta, err), tuple(_folder_triggers(folder, meta, err)),
                  variant_of(str(meta.system), meta.backend_options))


def variant_of(system: str, options) -> str:
    """``system``'s Backend.probe_variant of ``options`` ("" for a system nnfuzz does not know by name: a
    user's backend path, whose folders steer its campaigns whatever their options)."""
    from nnfuzz.backends import backend_class

    try:
        cls = backend_class(system)
    except ConfigError:
        return ""
    return cls.probe_variant(options or {})


def _short(folder: Path) -> str:
    """``folder`` relative to the working folder when under it (bugs/kept/0000), else absolute."""
    folder = Path(folder).resolve()
    try:
        return str(folder.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(folder)


def _folder_triggers(folder: Path, meta, err: str) -> List[Tuple[str, Tuple[str, ...]]]:
    """The (op, input dtypes) of the node a folder's bug is in: its root cause's node; else, in a graph of
    at most SMALL nodes, the nodes of the op its error names (every node when it names none of them);
    else none (the first divergent node of a large graph is not the root cause: no steering)."""
    gir_file = folder / "gir.json"
    if not gir_file.is_file():
        return []
    from nnfuzz.gir import GraphIR
    from nnfuzz.stats.corpus import from_gir

    nodes = from_gir(GraphIR.loads(gir_file.read_text())).nodes
    rc = meta.root_cause if isinstance(meta.root_cause, dict) else {}
    if isinstance(rc.get("index"), int) and 0 <= rc["index"] < len(nodes):
        picked = [nodes[rc["index"]]]
    elif len(nodes) <= SMALL:
        named = bug_cause(meta, err).get("op")
        picked = [n for n in nodes if n.op == named] or nodes
    else:
        return []
    return list(dict.fromkeys((n.op, tuple(n.in_dtypes)) for n in picked))


def read_known_file(path) -> List[Entry]:
    """The entries of a known-bugs file: a YAML list of entries, or a mapping with key ``known`` holding
    one. A malformed file or entry is a ConfigError naming the file, the entry and the field."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"fuzz.known_file: {path} is not a file; give a YAML file of known bugs (docs/known-bugs.md)")
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise ConfigError(f"{path} is not readable YAML ({type(e).__name__}: {e})") from None
    if isinstance(data, dict) and set(data) == {"known"}:
        data = data["known"]
    if data is None:
        return []
    if not isinstance(data, list):
        raise ConfigError(f"{path}: expected a list of known bugs (or a mapping with key 'known' holding one), "
                          f"got {type(data).__name__}")
    return [_entry(f"{_short(path)} entry {k}", item) for k, item in enumerate(data)]


def _entry(where: str, item) -> Entry:
    from nnfuzz.abstract.dtype import DType

    def bad(field: str, why: str):
        return ConfigError(f"{where}: {field}={item.get(field)!r} {why}")

    if not isinstance(item, dict):
        raise ConfigError(f"{where} must be a mapping of {list(FIELDS)}, got {item!r}")
    unknown = [k for k in item if k not in FIELDS]
    if unknown:
        raise ConfigError(f"{where}: unknown field {unknown[0]!r}; valid fields: {list(FIELDS)}")
    for field in ("system", "kind", "message", "note", "link"):
        if item.get(field) is not None and not isinstance(item[field], str):
            raise bad(field, "must be a string")
    system = item.get("system")
    if system is not None and not re.fullmatch(r"[\w.]+-[\w.]+", system):
        raise bad("system", "is not a backend name <system>-<device> (e.g. ort-cpu, tvm-cpu; `nnfuzz backends` lists them)")
    ops = item.get("op")
    if isinstance(ops, str):
        ops = [ops]
    if ops is not None and (not isinstance(ops, list) or not ops or not all(isinstance(o, str) and o for o in ops)):
        raise bad("op", "must be an op name or a list of op names (as meta.json's root_cause names them)")
    dtypes = item.get("dtype")
    dtypes = [dtypes] if isinstance(dtypes, str) else dtypes
    if dtypes is not None and (not isinstance(dtypes, list) or not dtypes
                               or any(d not in [x.value for x in DType] for d in dtypes)):
        raise bad("dtype", f"is not a dtype or a list of dtypes; valid: {[d.value for d in DType]}")
    kind = item.get("kind")
    if kind is not None and kind not in KINDS:
        raise bad("kind", f"is not a kind; valid: {list(KINDS)}")
    message = item.get("message")
    if message is not None:
        try:
            re.compile(message)
        except re.error as e:
            raise bad("message", f"is not a regular expression ({e})") from None
    if ops is None and message is None:
        raise ConfigError(f"{where}: give op or message (an entry with neither would match every bug of its system)")
    spelling = item.get("spelling") or {}
    if not isinstance(spelling, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in spelling.items()):
        raise bad("spelling", "must map spelling keys to the choice to avoid (meta.json export.spellings), "
                              "e.g. {shape: computed}")
    if not isinstance(item.get("steer", True), bool):
        raise bad("steer", "must be true or false")
    return Entry(where, system, tuple(ops) if ops else None, tuple(dtypes) if dtypes else None, kind, message, tuple(sorted(spelling.items())),
                 item.get("note") or "", item.get("link") or "", item.get("steer", True))
