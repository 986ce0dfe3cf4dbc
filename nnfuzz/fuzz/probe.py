"""Which op x dtype rows a backend supports, probed once per backend version and cached on disk.

Each row gets a one-op graph; many are merged side by side into one model and tested in the
sandbox. A batch that the backend reports UNSUPPORTED is split in halves until the unsupported rows
are isolated. Anything else (pass, crash, wrong values, timeout) counts as supported: the campaign
is there to find those. Probing takes at most 30% of the campaign's time (at least 3 s, never past
its bound); rows not probed yet stay enabled and are probed by the next campaign.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import nnfuzz
from nnfuzz.abstract.dtype import DType
from nnfuzz.errors import ConstraintError, InternalError, NNFuzzError
from nnfuzz.generate.opset import allowed_rows
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.verdict import Outcome, judge

BATCH = 48
Row = Tuple[tuple, tuple]


def cache_dir() -> Path:
    return Path(os.environ.get("NNFUZZ_CACHE", Path.home() / ".cache" / "nnfuzz")) / "probe"


def row_key(row: Row) -> str:
    return ",".join(d.value for d in row[0]) + "->" + ",".join(d.value for d in row[1])


def parse_row(key: str) -> Row:
    a, b = key.split("->")
    return tuple(DType(x) for x in a.split(",") if x), tuple(DType(x) for x in b.split(",") if x)


def cache_path(info, opset: int) -> Path:
    """The probe cache file for a BackendInfo and opset."""
    ident = json.dumps([info.name, info.version, info.version_id, opset, nnfuzz.__version__])
    return cache_dir() / f"{info.name}-{hashlib.sha1(ident.encode()).hexdigest()[:16]}.json"


def probe_support(sandbox, ops: List[type], cc, campaign) -> List[type]:
    """Probe (or load from cache) and return ``ops``; the campaign's generator rows are limited to
    the supported ones via ``campaign.rows``. Prints what was found."""
    info = sandbox.backend_info
    path = cache_path(info, cc.opset)
    cached: Dict[str, Dict[str, bool]] = json.loads(path.read_text()) if path.is_file() else {}
    todo = []
    for cls in ops:
        for row in _class_rows(cls, cc.policy):
            if row_key(row) not in cached.get(cls.name, {}):
                todo.append((cls, row))
    t0 = time.monotonic()
    errors: Dict[str, str] = {}
    if todo:
        _probe_batches(sandbox, todo, cc, campaign, cached, errors)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(cached, indent=1, sort_keys=True))
        os.replace(tmp, path)
    unsupported = sorted(f"{op}[{k}]" for op, rows in cached.items() for k, ok in rows.items() if not ok)
    n_rows = sum(len(v) for v in cached.values())
    msg = (f"probe: {cc.backend} supports {n_rows - len(unsupported)}/{n_rows} op x dtype rows "
           f"({len(todo)} probed in {time.monotonic() - t0:.1f}s, cache {path})")
    print(msg, flush=True)
    if cc.debug:
        for item in unsupported:
            print(f"  unsupported: {item}" + (f": {errors[item]}" if item in errors else ""), flush=True)
    campaign.rows = {op: {parse_row(k) for k, ok in rows.items() if ok} for op, rows in cached.items()}
    return [c for c in ops if campaign.rows.get(c.name, True)]


def _class_rows(cls, policy) -> List[Row]:
    return [(cls.in_dtypes[k], cls.out_dtypes[k]) for k in allowed_rows(cls, policy.dtype_set)]


def _single_op_graphs(todo, cc) -> List[Tuple[type, Row, Optional[GraphIR]]]:
    from nnfuzz.generate.symbolic import GraphGenerator

    out = []
    for k, (cls, row) in enumerate(todo):
        policy = dataclasses.replace(cc.policy, seed=k, max_nodes=1, max_attempts=60, graph_timeout_s=2.0)
        try:
            gir = GraphGenerator(policy, [cls], rows={cls.name: {row}}).generate()
        except ConstraintError:
            gir = None  # no instance with this row under the policy: leave it enabled
        out.append((cls, row, gir))
    return out


def merge(girs: List[GraphIR]) -> GraphIR:
    """Independent graphs side by side in one GraphIR (vars prefixed per graph)."""
    m = GraphIR()
    for k, g in enumerate(girs):
        r = {v: f"g{k}_{v}" for v in g.vars}
        m.vars.update({r[v]: t for v, t in g.vars.items()})
        m.inputs += [r[v] for v in g.inputs]
        m.weights += [r[v] for v in g.weights]
        m.insts += [Inst(i.op, [r[v] for v in i.inputs], [r[v] for v in i.outputs]) for i in g.insts]
        m.outputs += [r[v] for v in g.outputs]
    return m


def _probe_batches(sandbox, todo, cc, campaign, cached, errors) -> None:
    """Probe ``todo`` rows a batch at a time; the one-op graphs are made per batch, inside the budget."""
    from nnfuzz.materialize.model import build_model

    engine = sandbox.backend_info.engine
    chunks = [todo[i:i + BATCH] for i in range(0, len(todo), BATCH)][::-1]  # popped from the end: in order
    stack = []
    budget_end = time.monotonic() + max(3.0, 0.3 * cc.time_s)
    while (stack or chunks) and campaign.left() > 1.0 and time.monotonic() < budget_end:
        if not stack:
            models = _single_op_graphs(chunks.pop(), cc)
            for cls, row, gir in models:
                if gir is None:  # no instance with this row under the policy: left enabled
                    cached.setdefault(cls.name, {})[row_key(row)] = True
            stack.append([m for m in models if m[2] is not None])
            continue
        batch = stack.pop()
        if not batch:
            continue
        try:
            model = build_model(merge([g for _, _, g in batch]), 0, opset=cc.opset, export=sandbox.format == "onnx",
                                export_timeout_s=min(cc.export_timeout_s, campaign.left()))
        except InternalError:  # a bug in nnfuzz: shown, never taken for an op that does not export
            raise
        except NNFuzzError:
            if len(batch) > 1:
                stack += [batch[: len(batch) // 2], batch[len(batch) // 2:]]
            continue  # a single op that will not export is left enabled; the campaign reports it
        res = sandbox.run_model(model, model.oracle.input, timeout=campaign.run_timeout())
        verdict = judge(res, None, engine)
        if verdict.outcome is Outcome.UNSUPPORTED and len(batch) > 1:
            stack += [batch[: len(batch) // 2], batch[len(batch) // 2:]]
            continue
        ok = verdict.outcome is not Outcome.UNSUPPORTED
        for cls, row, _ in batch:
            cached.setdefault(cls.name, {})[row_key(row)] = ok
            if not ok:
                errors[f"{cls.name}[{row_key(row)}]"] = verdict.summary
