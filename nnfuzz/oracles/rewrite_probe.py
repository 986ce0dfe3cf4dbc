"""Which metamorphic rewrites a system can read at all (``oracle=metamorphic``): each kind is applied
once to a four-node model and run; a kind the system answers with UNSUPPORTED (TVM's Relax ONNX
frontend reads no model-local functions and no ``Loop``) is not drawn, since every model rewritten
with it would only be another "unsupported". Cached per backend version like the op probe."""
from __future__ import annotations

import json
from typing import List

import numpy as np

from nnfuzz.output import say


def _tiny():
    """y = |relu(x) + (-x)|: two independent nodes (reorder), a chain to wrap, a graph output to fan out."""
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"), helper.make_node("Neg", ["x"], ["b"], name="neg"),
             helper.make_node("Add", ["a", "b"], ["c"], name="add"), helper.make_node("Abs", ["c"], ["y"], name="abs")]
    return helper.make_model(helper.make_graph(nodes, "probe", [x], [y]), producer_name="nnfuzz",
                             opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def probe_rewrites(sandbox, cc) -> List[str]:
    """The rewrite kinds ``sandbox``'s system reads (printed; cached on disk)."""
    from nnfuzz.fuzz.probe import _write_json, cache_path
    from nnfuzz.materialize.onnx.rewrite.graphs import NotApplicable
    from nnfuzz.materialize.onnx.rewrite.drawing import load_all, rewrite_model
    from nnfuzz.verdict import Outcome, judge

    info = sandbox.backend_info
    path = cache_path(info, "rewrites")
    cached = json.loads(path.read_text()) if path.is_file() else {}
    model, x = _tiny(), {"x": np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)}
    todo = [k for k in sorted(load_all()) if k not in cached]
    for kind in todo:
        for seed in range(16):
            try:
                rw, _ = rewrite_model(model, seed, None, [kind], steps=1)
                break
            except NotApplicable:
                continue
        else:
            cached[kind] = True  # nothing to try it on here: left to the campaign
            continue
        res = sandbox.run(rw.SerializeToString(), x, timeout=max(cc.test_timeout, 30.0))
        cached[kind] = judge(res, None, info.engine).outcome is not Outcome.UNSUPPORTED
    if todo:
        _write_json(path, cached)
    kinds = [k for k, ok in sorted(cached.items()) if ok and k in load_all()]
    off = sorted(k for k, ok in cached.items() if not ok)
    if not kinds:
        from nnfuzz.errors import ConfigError

        raise ConfigError(f"oracle=metamorphic: {cc.backend} reads none of the rewrites {sorted(load_all())} "
                          f"(cache {path}); use another oracle for it")
    say(f"probe: {cc.backend} reads rewrites {kinds}" + (f"; not {off} (unsupported)" if off else ""))
    return kinds
