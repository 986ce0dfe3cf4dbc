"""What TensorRT is known to refuse: ``TensorRtBackend``'s knowledge (nnfuzz/backends/tensorrt.py)."""
from __future__ import annotations

from nnfuzz.backends.known import Known

KNOWN = (
    Known(r"trt-gpu does not compute in float64", dtype="float64", note="TensorRT has no float64 type"),
    Known(r"ErrorCode\.UNSUPPORTED_(NODE|GRAPH)\w*",
          note="TensorRT's ONNX parser lacks the op, attribute or dtype"),
)
