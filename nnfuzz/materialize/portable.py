"""A model as the GraphIR plus its weights, in one byte string: what backends that build the model
themselves (torch.compile, TensorFlow) receive instead of an ONNX file, and what their bug folders keep.

Layout: 8 bytes of header length, a JSON header ``{"gir": ..., "weights": [[name, dtype, shape], ...]}``,
then each weight's raw bytes in order. No pickle: a payload from someone else runs no code.
"""
from __future__ import annotations

import json
import struct
from typing import Dict, Tuple

import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.errors import NNFuzzError
from nnfuzz.gir import GraphIR

MAGIC = b"NNFZGIR1"


def pack(gir_text: str, weights: Dict[str, np.ndarray]) -> bytes:
    specs, blobs = [], []
    for name in sorted(weights):
        a = np.asarray(weights[name], order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
        specs.append([name, DType.parse(a.dtype).value, list(a.shape)])
        blobs.append(a.tobytes())
    header = json.dumps({"gir": json.loads(gir_text), "weights": specs}).encode()
    return MAGIC + struct.pack("<Q", len(header)) + header + b"".join(blobs)


def unpack(data: bytes) -> Tuple[GraphIR, Dict[str, np.ndarray]]:
    """The GraphIR and weights of a payload; a malformed one raises NNFuzzError saying what is wrong."""
    if not data.startswith(MAGIC) or len(data) < 16:
        raise NNFuzzError("not a nnfuzz GraphIR payload (missing the NNFZGIR1 header)")
    (n,) = struct.unpack("<Q", data[8:16])
    try:
        header = json.loads(data[16:16 + n])
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


def model_payload(gir: GraphIR, weights: Dict[str, np.ndarray], onnx_proto, fmt: str) -> bytes:
    """What a backend taking ``fmt`` receives: the ONNX bytes, or the GraphIR payload."""
    if fmt == "gir":
        return pack(gir.dumps(), weights)
    if fmt != "onnx":
        raise NNFuzzError(f"unknown model format {fmt!r}; known: onnx, gir")
    if onnx_proto is None:
        raise NNFuzzError("the model was built without its ONNX export (build_model(export=False))")
    return onnx_proto.SerializeToString()
