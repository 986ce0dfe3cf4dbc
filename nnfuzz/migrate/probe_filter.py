"""``migrate.backend=<system>``: keep only the tests the system's probe cache (fuzz/probe.py, read only)
does not rule out: a model at an opset the system was found not to read, or a single-node test whose
op x dtype row (an nnfuzz operator of the same name as the ONNX op type) was probed unsupported. What
the cache does not know is kept: the campaign finds out."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Optional


class ProbeFilter:
    def __init__(self, name: str):
        from nnfuzz.backends.base import BackendInfo
        from nnfuzz.backends.registry import get_backend
        from nnfuzz.fuzz.probe import cache_path
        from nnfuzz.materialize.onnx.spec import FIRST_OPSET, newest_opset

        self.info = BackendInfo.of(get_backend(name))
        self.opsets: Dict[str, bool] = _read(cache_path(self.info, "opsets"))
        self.rows: Dict[str, Dict[str, bool]] = {}
        for opset in range(FIRST_OPSET, newest_opset() + 1):
            for op, rows in _read(cache_path(self.info, opset)).items():
                for key, ok in rows.items():   # a row found unsupported at any opset stays unsupported
                    self.rows.setdefault(op, {})[key] = self.rows.get(op, {}).get(key, True) and bool(ok)
        self.note = "" if self.opsets or self.rows else (
            f"no probe cache for {name} {self.info.version}: no test is filtered; run a campaign on it once "
            f"(`nnfuzz fuzz backend={name} time=1m`) to probe what it reads")

    def reason(self, t) -> Optional[str]:
        """Why ``t`` (a MigratedTest) is left out for this system, or None."""
        from nnfuzz.abstract.dtype import DType
        from nnfuzz.fuzz.probe import row_key

        if self.opsets.get(str(t.opset)) is False:
            return "backend-opset-unread"
        rows = self.rows.get(t.operator)
        if t.nodes == 1 and rows:
            key = row_key((tuple(DType(str(a.dtype)) for a in t.inputs.values()),
                           tuple(DType(str(a.dtype)) for a in t.outputs.values())))
            if rows.get(key) is False:
                return "backend-unsupported"
        return None


def _read(path: Path) -> dict:
    if not path.is_file():
        return {}
    from nnfuzz.errors import NNFuzzError

    try:
        obj = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise NNFuzzError(f"probe cache {path} is unreadable ({type(e).__name__}: {e}); delete it, and the "
                          f"next campaign on that system probes again") from None
    if not isinstance(obj, dict):
        raise NNFuzzError(f"probe cache {path} holds a {type(obj).__name__}, not an object; delete it")
    return obj
