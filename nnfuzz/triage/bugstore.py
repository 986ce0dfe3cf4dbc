"""The bug store: ``bugs/NNNN/`` folders, numbered without gaps, each written atomically.

A folder holds model.onnx (or model.gir, the GraphIR payload, for systems that build the model themselves,
plus the model/ SavedModel folder for TF systems; or model.relax, the payload of a TVM Relax-native model,
plus model.py, its module's TVMScript), gir.json, oracle.pkl, meta.json and err.log (see docs/bug-format.md).
A second campaign into the same store continues the numbering. Temporary folders from an
interrupted write are hidden (``.NNNN.*``) and never take a number. Only ``NNNN`` folders are bugs: the
repository's kept bugs live in ``bugs/kept/`` (``kept_store()``), beside a campaign's default store ``bugs/``,
and take no number of it.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from nnfuzz.errors import NNFuzzError
from nnfuzz.triage.folder import BugFolderError, dump_oracle, load_oracle, write_bytes, write_folder_atomic
from nnfuzz.triage.meta import BugMeta, read_meta, write_meta

BUG_DIR = re.compile(r"^\d{4}$")  # a bug folder's name; bugs/kept/ (the kept bugs) is not one
KEPT = Path(__file__).resolve().parents[2] / "bugs" / "kept"  # the repository's kept bugs (in a checkout)
REQUIRED = ("oracle.pkl", "meta.json")
REWRITE_FILE = "model_rewrite.onnx"   # the metamorphic oracle's rewritten model (meta.json ``rewrite``)
MODEL_FILES = {"onnx": "model.onnx", "gir": "model.gir", "relax": "model.relax"}
PAYLOAD_FORMATS = ("gir", "relax")  # formats whose model file is a GraphIR payload (materialize/portable.py)


def kept_store() -> Optional[Path]:
    """The repository's kept bugs, ``bugs/kept/`` of the checkout nnfuzz runs from; None when nnfuzz is not
    run from a checkout (an installed wheel has no bugs/)."""
    return KEPT if KEPT.is_dir() else None


@dataclass
class Bug:
    path: Path
    model_bytes: bytes
    oracle: dict                         # oracle.pkl: input, output (+ output_f64, output_f64_jitter)
    meta: BugMeta
    gir_text: Optional[str] = None
    format: str = "onnx"                 # of model_bytes: "onnx", "gir" or "relax" (nnfuzz.materialize.portable)
    rewrite_bytes: Optional[bytes] = None  # model_rewrite.onnx (oracle=metamorphic)


class BugStore:
    def __init__(self, root):
        self.root = Path(root)
        self.lock = threading.Lock()  # held by save() and by a background reducer's folder swap

    def numbers(self):
        if not self.root.is_dir():
            return []
        return sorted(int(p.name) for p in self.root.iterdir() if p.is_dir() and BUG_DIR.match(p.name))

    def save(self, *, model_bytes: bytes, gir_text: Optional[str], oracle: dict, meta: BugMeta, err_log: str,
             tf_model: Optional[Callable[[Path], None]] = None, rewrite_bytes: Optional[bytes] = None) -> Path:
        """``tf_model``: a writer of the ``model/`` SavedModel folder (bugs of TF systems). ``gir_text`` None:
        a model with no GraphIR (a migrated library test), saved without gir.json. A relax model also
        gets model.py, the TVMScript of its module. ``rewrite_bytes``: the metamorphic oracle's rewritten
        model (model_rewrite.onnx)."""
        return self.add({
            MODEL_FILES[meta.format]: write_bytes(model_bytes),
            **({REWRITE_FILE: write_bytes(rewrite_bytes)} if rewrite_bytes is not None else {}),
            **({"model": tf_model} if tf_model is not None else {}),
            **({"model.py": relax_script_writer(model_bytes)} if meta.format == "relax" else {}),
            **({"gir.json": write_bytes(gir_text.encode())} if gir_text is not None else {}),
            "oracle.pkl": write_bytes(dump_oracle(oracle)),
            "meta.json": write_meta(meta),
            "err.log": write_bytes(err_log.encode()),
        })

    def add(self, writers) -> Path:
        """A new numbered folder holding one entry per ``writers`` item (``name -> fn(path)``)."""
        for _ in range(100):  # another campaign may take the number first: then take the next one
            with self.lock:
                nums = self.numbers()
                dest = self.root / f"{(nums[-1] + 1) if nums else 0:04d}"
                try:
                    return write_folder_atomic(dest, writers)
                except (FileExistsError, OSError) as e:
                    if dest.exists():
                        continue
                    raise NNFuzzError(f"cannot write bug folder {dest}: {e}") from e
        raise NNFuzzError(f"could not find a free bug number in {self.root}")


def read_err_log(folder) -> str:
    """A bug folder's err.log ("" when it has none)."""
    p = Path(folder) / "err.log"
    return p.read_text(errors="replace") if p.is_file() else ""


def load_bug(path) -> Bug:
    """Read a bug folder, refusing anything malformed (and any oracle.pkl that could run code)."""
    path = Path(path)
    if not path.is_dir():
        raise BugFolderError(f"{path} is not a folder; pass a bug folder such as bugs/0042/")
    missing = [f for f in REQUIRED if not (path / f).is_file()]
    models = [fmt for fmt, f in MODEL_FILES.items() if (path / f).is_file()]
    if missing or not models:
        raise BugFolderError(f"{path} lacks {missing + ([] if models else ['model.onnx'])}; a bug folder holds "
                             f"model.onnx (or model.gir), {list(REQUIRED)} (+ gir.json, err.log)")
    meta = read_meta(path / "meta.json")
    oracle = load_oracle(path / "oracle.pkl")
    gir = (path / "gir.json").read_text() if (path / "gir.json").is_file() else None
    fmt = models[0]
    data = (path / MODEL_FILES[fmt]).read_bytes()
    check_model_file(path / MODEL_FILES[fmt], data, fmt, checked=meta.invalid is None)
    rewrite = None
    if meta.rewrite is not None:
        if not (path / REWRITE_FILE).is_file():
            raise BugFolderError(f"{path}: meta.json records a rewrite (oracle=metamorphic) but {REWRITE_FILE} is missing; "
                                 f"restore it from the campaign's output")
        rewrite = (path / REWRITE_FILE).read_bytes()
        check_model_file(path / REWRITE_FILE, rewrite, "onnx")
    return Bug(path, data, oracle, meta, gir, fmt, rewrite)


def check_model_file(path: Path, data: bytes, fmt: str, checked: bool = True) -> None:
    """A BugFolderError unless ``data`` is a well-formed model of ``fmt``: an ONNX file that parses and
    passes the ONNX checker (``checked`` False: that only parses, for a model invalid on purpose), or a
    GraphIR payload (materialize/portable.py) that unpacks."""
    if fmt in PAYLOAD_FORMATS:
        from nnfuzz.materialize.portable import grad_spec, relax_seed, unpack

        try:
            unpack(data)
            relax_seed(data)
            grad_spec(data)  # oracle=grad: the gradient record in the header
        except NNFuzzError as e:
            raise BugFolderError(f"{path} is not a valid GraphIR payload: {e}") from e
        return
    import onnx
    from google.protobuf.message import DecodeError

    try:
        model = onnx.load_from_string(data)
        if checked:
            onnx.checker.check_model(model)
    except (DecodeError, onnx.checker.ValidationError) as e:
        raise BugFolderError(f"{path} is not a valid ONNX model ({type(e).__name__}: {str(e).strip()[:200]}); "
                             f"restore it from the campaign's output or re-save the bug") from e



def bug_weights(bug: Bug):
    """The weights of ``bug``'s graph (from the ONNX initializers and Constant nodes, or the GraphIR
    payload); None if the model lacks one of the graph's weights."""
    from nnfuzz.gir import GraphIR

    if bug.format in PAYLOAD_FORMATS:
        from nnfuzz.materialize.portable import unpack

        return unpack(bug.model_bytes)[1]
    import onnx
    from onnx import numpy_helper

    names = GraphIR.loads(bug.gir_text).weights if bug.gir_text else []
    graph = onnx.load_from_string(bug.model_bytes).graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    for node in graph.node:  # the direct path also spells a weight as a Constant node (WEIGHT_SPELLINGS)
        if node.op_type == "Constant" and len(node.output) == 1 and node.output[0] in names:
            value = [a for a in node.attribute if a.name == "value"]
            if value:
                inits[node.output[0]] = numpy_helper.to_array(value[0].t)
    if any(n not in inits for n in names):
        return None
    return {n: inits[n] for n in names}


def bug_payload(bug: Bug, fmt: str) -> bytes:
    """``bug``'s model in format ``fmt`` (to replay it on a system that takes the other format)."""
    if fmt == bug.format:
        return bug.model_bytes
    from nnfuzz.gir import GraphIR
    from nnfuzz.materialize.model import build_model
    from nnfuzz.materialize.portable import model_payload

    weights = bug_weights(bug)
    if bug.gir_text is None or weights is None:
        raise BugFolderError(f"{bug.path} holds a {bug.format} model without the gir.json and weights needed to "
                             f"turn it into {fmt}; replay it on a system that takes {bug.format}")
    gir = GraphIR.loads(bug.gir_text)
    model = build_model(gir, 0, export=bug.meta.export_spec() if fmt == "onnx" else False,
                        values=(weights, dict(bug.oracle["input"])))
    return model_payload(gir, weights, model.onnx, fmt, bug.meta.seed or 0)


def relax_script_writer(payload: bytes):
    """A writer of model.py: the TVMScript of a relax payload's module (weights as ``main``'s trailing
    parameters; the payload holds their values), which ``tvm.script.from_source`` reads back."""
    def write(path: Path) -> None:
        from nnfuzz.materialize.relax.build import module_script

        path.write_text(module_script(payload))

    return write
