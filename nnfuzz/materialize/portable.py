"""A model as the GraphIR plus its weights, in one byte string: what backends that build the model
themselves (torch.compile, TensorFlow) receive instead of an ONNX file, and what their bug folders keep.

Layout: 8 bytes of header length, a JSON header ``{"gir": ..., "weights": [[name, dtype, shape], ...]}``,
then each weight's raw bytes in order. No pickle: a payload from someone else runs no code.

The ``relax`` format (TVM's Relax-native models) is the same payload with ``"relax": {"seed": N}`` in the
header: the seed the module's layout (its functions and blocks, materialize/relax/build.py) is drawn from.
A gradient test's payload (``oracle=grad``) has ``"grad": {"outputs": [...], "wrt": [...]}`` in the header
(materialize/torch/grad.py GradSpec): the backend also runs the backward and returns the gradients.
"""
from __future__ import annotations

import json
import struct
from typing import Dict, Optional, Tuple

import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.errors import NNFuzzError
from nnfuzz.gir import GraphIR

MAGIC = b"NNFZGIR1"


def pack(gir_text: str, weights: Dict[str, np.ndarray], relax_seed: Optional[int] = None,
         grad: Optional[dict] = None) -> bytes:
    """The payload; with ``relax_seed``, a ``relax`` payload (the layout seed in its header); with ``grad``
    (GradSpec.to_json()), a gradient test's."""
    specs, blobs = [], []
    for name in sorted(weights):
        a = np.asarray(weights[name], order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
        specs.append([name, DType.parse(a.dtype).value, list(a.shape)])
        blobs.append(a.tobytes())
    head = {"gir": json.loads(gir_text), "weights": specs}
    if relax_seed is not None:
        head["relax"] = {"seed": int(relax_seed)}
    if grad is not None:
        head["grad"] = grad
    header = json.dumps(head).encode()
    return MAGIC + struct.pack("<Q", len(header)) + header + b"".join(blobs)


def is_payload(data: bytes) -> bool:
    """Whether ``data`` is a GraphIR payload (else: an ONNX file)."""
    return data.startswith(MAGIC)


def relax_seed(data: bytes) -> Optional[int]:
    """The Relax layout seed of a ``relax`` payload (None: a plain GraphIR payload)."""
    _, header = _header(data)
    if "relax" not in header:
        return None
    try:
        return int(header["relax"]["seed"])
    except (KeyError, TypeError, ValueError) as e:
        raise NNFuzzError(f"malformed relax payload: its header's relax entry {header['relax']!r} has no "
                          f"integer seed ({type(e).__name__}: {e})") from e


def grad_spec(data: bytes):
    """The GradSpec of a gradient test's payload (None: a plain one, or ONNX bytes)."""
    if not is_payload(data):
        return None
    _, header = _header(data)
    if "grad" not in header:
        return None
    from nnfuzz.materialize.torch.grad import GradSpec

    return GradSpec.from_json(header["grad"])


def _header(data: bytes):
    if not data.startswith(MAGIC) or len(data) < 16:
        raise NNFuzzError("not a nnfuzz GraphIR payload (missing the NNFZGIR1 header)")
    (n,) = struct.unpack("<Q", data[8:16])
    try:
        return n, json.loads(data[16:16 + n])
    except ValueError as e:
        raise NNFuzzError(f"malformed GraphIR payload header: {e}") from e


def unpack(data: bytes) -> Tuple[GraphIR, Dict[str, np.ndarray]]:
    """The GraphIR and weights of a payload; a malformed one raises NNFuzzError saying what is wrong."""
    n, header = _header(data)
    try:
        gir = GraphIR.loads(json.dumps(header["gir"]))
        weights, offset = {}, 16 + n
        for name, dtype, shape in header["weights"]:
            dt = np.dtype(DType(dtype).numpy())
            size = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
            if offset + size > len(data):
                raise ValueError(f"weight {name} runs past the end of the payload")
            weights[name] = np.frombuffer(data, dt, count=size // dt.itemsize, offset=offset).reshape(tuple(shape)).copy()
            offset += size
    except (ValueError, KeyError, TypeError) as e:
        raise NNFuzzError(f"malformed GraphIR payload: {type(e).__name__}: {e}") from e
    return gir, weights


FORMATS = ("onnx", "gir", "relax")


def model_payload(gir: GraphIR, weights: Dict[str, np.ndarray], onnx_proto, fmt: str, seed: int = 0) -> bytes:
    """What a backend taking ``fmt`` receives: the ONNX bytes, or the GraphIR payload (``relax``: with
    ``seed`` as the layout seed)."""
    if fmt in ("gir", "relax"):
        return pack(gir.dumps(), weights, seed if fmt == "relax" else None)
    if fmt != "onnx":
        raise NNFuzzError(f"unknown model format {fmt!r}; known: {', '.join(FORMATS)}")
    if onnx_proto is None:
        raise NNFuzzError("the model was built without its ONNX export (build_model(export=False))")
    return onnx_proto.SerializeToString()
