"""The model/bug folder format: atomic writes, and a restricted loader for oracle.pkl.

A folder is built in a temporary sibling and renamed into place, so an interrupted write never
leaves a half-written folder. ``oracle.pkl`` is read by an unpickler that admits only numpy arrays
and plain containers: a folder from someone else must never run code on the machine that loads it.
"""
from __future__ import annotations

import io
import json
import os
import pickle
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Dict

import numpy as np

from nnfuzz.errors import NNFuzzError


class BugFolderError(NNFuzzError):
    """A bug or model folder is missing files or holds malformed ones."""


class UnsafePickleError(BugFolderError):
    """oracle.pkl references something other than numpy arrays and plain containers."""


_ALLOWED = {
    ("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"), ("numpy.dtypes", None), ("ml_dtypes", "bfloat16"),
    ("builtins", "dict"), ("builtins", "list"), ("builtins", "tuple"), ("collections", "OrderedDict"),
}


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _ALLOWED or (module, None) in _ALLOWED and name.endswith("DType"):
            return super().find_class(module, name)
        raise UnsafePickleError(
            f"oracle.pkl refers to {module}.{name}, which is not a numpy array or plain container; "
            "refusing to load it (it could run code). Only load oracles from nnfuzz."
        )


def load_oracle(path: Path) -> dict:
    data = Path(path).read_bytes()
    try:
        obj = _RestrictedUnpickler(io.BytesIO(data)).load()
    except UnsafePickleError:
        raise
    except Exception as e:
        raise BugFolderError(f"{path}: corrupt oracle.pkl ({type(e).__name__}: {e})") from e
    if not isinstance(obj, dict) or "input" not in obj or "output" not in obj:
        raise BugFolderError(f"{path}: oracle.pkl must hold {{'input': ..., 'output': ...}}, got {type(obj).__name__}")
    for part in ("input", "output", "output_f64", "output_f64_jitter"):
        v = obj.get(part)
        if v is None and part != "input":
            continue
        if not isinstance(v, dict) or not all(isinstance(a, np.ndarray) for a in v.values()):
            raise BugFolderError(f"{path}: oracle.pkl['{part}'] must map names to numpy arrays")
    shapes = obj.get("shapes")  # a dynamic model's every shape (docs/dynamic-shapes.md)
    if shapes is not None and not (isinstance(shapes, list) and all(
            isinstance(s, dict) and all(isinstance(s.get(k), dict) and all(isinstance(a, np.ndarray) for a in s[k].values())
                                        for k in ("input", "output")) for s in shapes)):
        raise BugFolderError(f"{path}: oracle.pkl['shapes'] must be a list of {{'input': ..., 'output': ...}}, "
                             "each mapping names to numpy arrays")
    return obj


def dump_oracle(oracle: dict) -> bytes:
    return pickle.dumps(oracle, protocol=4)


def write_folder_atomic(dest: Path, writers: Dict[str, Callable[[Path], None]]) -> Path:
    """Create ``dest`` with one file per ``writers`` entry (``name -> fn(path)``), all or nothing."""
    dest = Path(dest)
    if dest.exists():
        raise FileExistsError(f"{dest} already exists; refusing to overwrite it")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        for name, fn in writers.items():
            fn(tmp / name)
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def write_json(obj) -> Callable[[Path], None]:
    return lambda p: p.write_text(json.dumps(obj, indent=1, default=str))


def write_bytes(data: bytes) -> Callable[[Path], None]:
    return lambda p: p.write_bytes(data)


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``path`` through a temporary file and a rename: readers see the old or the new file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
