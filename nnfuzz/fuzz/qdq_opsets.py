"""The opsets QDQ graphs are written at: a system may read an opset for most ops yet lack the quantize
kernels of its newest version (ONNX Runtime 1.32 reads opset 28 and has no QuantizeLinear(28)). Its
optimizer then rewrites such a model before finding that out, and what it reports (a fused QLinear
node with mismatched types) reads like a bug although the model could never run there. So QDQ graphs
are written at the opsets where a QuantizeLinear -> DequantizeLinear model runs on every ONNX system of
the campaign: probed once per backend version, newest first, and cached beside the opset probe."""
from __future__ import annotations

import json
from typing import Optional

import numpy as np

KEY = "qdq:{}"  # the opset probe cache's key for "a Q -> DQ model runs at this opset" (or "blocked")
BLOCKED_SINCE = 21


def qdq_opset(sandboxes, export, clock) -> Optional[int]:
    """The newest opset of ``export``'s range at which every ONNX sandbox runs a Q -> DQ model (None: none)."""
    from nnfuzz.fuzz.probe import _write_json, cache_path

    lo, hi = export.range
    cap = hi
    for sandbox in sandboxes:
        path = cache_path(sandbox.backend_info, "opsets")
        cached = json.loads(path.read_text()) if path.is_file() else {}
        found = None
        for o in range(cap, lo - 1, -1):
            if KEY.format(o) not in cached:
                res = sandbox.run(_model(o), {"x": np.array([0.3, -0.2], np.float32)}, timeout=clock.run_timeout())
                cached[KEY.format(o)] = res.status == "ok"
                _write_json(path, cached)
            if cached[KEY.format(o)]:
                found = o
                break
        if found is None:
            return None
        cap = found
    return cap


def qdq_blocked(sandboxes, cap: int, clock) -> bool:
    """Whether every ONNX sandbox runs blocked quantization (opset 21 ``block_size``, in blocks that divide
    the axis) at an opset up to ``cap``: a QuantizeLinear -> DequantizeLinear model in blocks of 2, cached
    beside the opset probe."""
    from nnfuzz.fuzz.probe import _write_json, cache_path

    if cap < BLOCKED_SINCE:
        return False
    for sandbox in sandboxes:
        path = cache_path(sandbox.backend_info, "opsets")
        cached = json.loads(path.read_text()) if path.is_file() else {}
        if KEY.format("blocked") not in cached:
            res = sandbox.run(_model(BLOCKED_SINCE, block=2), {"x": np.array([[0.3, -0.2, 0.1, 0.7]], np.float32)},
                              timeout=clock.run_timeout())
            cached[KEY.format("blocked")] = res.status == "ok"
            _write_json(path, cached)
        if not cached[KEY.format("blocked")]:
            return False
    return True


def _model(opset: int, block: int = 0) -> bytes:
    """x[2] (or, with ``block``, x[1, 4] in blocks of ``block`` along axis 1) -> QuantizeLinear -> DequantizeLinear."""
    from onnx import TensorProto, helper

    ops = [helper.make_opsetid("", opset)]
    shape, grid = ([2], []) if not block else ([1, 4], [1, 4 // block])
    n = 1 if not block else 4 // block
    attrs = {"axis": 1, "block_size": block} if block else {}
    g = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], **attrs),
         helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], **attrs)],
        "qdq_probe", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [helper.make_tensor("s", TensorProto.FLOAT, grid, [0.1] * n), helper.make_tensor("z", TensorProto.UINT8, grid, [3] * n)])
    return helper.make_model(g, opset_imports=ops, ir_version=helper.find_min_ir_version_for(ops)).SerializeToString()
