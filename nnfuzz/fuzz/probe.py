"""Which opsets and op x dtype rows a backend supports, probed once per backend version and cached on disk.

Opsets (``probe_opsets``): a one-node model at each opset nnfuzz writes; the backend reads the ones it
runs, and each model of a campaign with ``export.opset=null`` draws its opset from that range.

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
import sys
import os
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

import nnfuzz
from nnfuzz.abstract.dtype import DType
from nnfuzz.errors import ConstraintError, InternalError, NNFuzzError
from nnfuzz.generate.opset import allowed_rows
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.output import say
from nnfuzz.verdict import Outcome, judge

BATCH = 48
PLAIN_TRIES = 20  # graphs drawn for a row until one is in a plain form (_row_graph)
Row = Tuple[tuple, tuple]


def cache_dir() -> Path:
    from nnfuzz.cache_root import cache_root

    return cache_root() / "probe"


def row_key(row: Row) -> str:
    return ",".join(d.value for d in row[0]) + "->" + ",".join(d.value for d in row[1])


def parse_row(key: str) -> Row:
    a, b = key.split("->")
    return tuple(DType(x) for x in a.split(",") if x), tuple(DType(x) for x in b.split(",") if x)


def cache_path(info, opset, variant: str = "") -> Path:
    """The probe cache file for a BackendInfo and opset (or "opsets", for the opset probe); ``variant``:
    the backend's options that change which kernels it runs (``Backend.probe_variant``)."""
    ident = json.dumps([info.name, info.version, info.version_id, opset, nnfuzz.__version__] + ([variant] if variant else []))
    return cache_dir() / f"{info.name}-{hashlib.sha1(ident.encode()).hexdigest()[:16]}.json"


def probe_support(sandbox, ops: List[type], cc, export, clock) -> Tuple[List[type], Dict[str, set]]:
    """Probe (or load from cache, per backend version and the newest opset of ``export``, the campaign's
    model template) the op x dtype rows of ``ops``, within ``clock``'s time; (the ops with a supported
    row, {op name: its supported rows}) limit the campaign's generator. Prints what was found."""
    from nnfuzz.backends.registry import backend_class

    info = sandbox.backend_info
    variant = backend_class(cc.backend_path or cc.backend).probe_variant(cc.backend_options)
    path = cache_path(info, _probe_spec(export).opset, variant)
    cached: Dict[str, Dict[str, bool]] = read_cache(path, rows=True)
    todo = []
    for cls in ops:
        for row in _class_rows(cls, cc.policy):
            if row_key(row) not in cached.get(cls.name, {}):
                todo.append((cls, row))
    t0 = time.monotonic()
    errors: Dict[str, str] = {}
    if todo:
        _probe_batches(sandbox, todo, cc, export, clock, cached, errors)
        _write_json(path, cached)
    unsupported = sorted(f"{op}[{k}]" for op, rows in cached.items() for k, ok in rows.items() if not ok)
    n_rows = sum(len(v) for v in cached.values())
    msg = (f"probe: {cc.backend} supports {n_rows - len(unsupported)}/{n_rows} op x dtype rows "
           f"({len(todo)} probed in {time.monotonic() - t0:.1f}s, cache {path})")
    say(msg)
    if cc.debug:
        for item in unsupported:
            say(f"  unsupported: {item}" + (f": {errors[item]}" if item in errors else ""))
    supported = {op: {parse_row(k) for k, ok in rows.items() if ok} for op, rows in cached.items()}
    return [c for c in ops if supported.get(c.name, True)], supported


def _probe_spec(export):
    """Rows are probed at the newest opset the campaign writes, in the canonical spelling."""
    return dataclasses.replace(export, opset=export.range[1] if export.opset is None or export.opsets
                               else export.opset, opsets=None, spelling="canonical")


def probe_opsets(sandboxes, cc, clock):
    """The campaign's export template with ``opsets`` set to the opsets every ONNX sandbox reads (a
    one-node model run at each opset nnfuzz writes; cached per backend version). Raises NNFuzzError
    when some sandbox reads none of them."""
    from nnfuzz.materialize.onnx.spec import FIRST_OPSET, newest_opset

    lo, hi = FIRST_OPSET, newest_opset()
    for sandbox in sandboxes:
        path = cache_path(sandbox.backend_info, "opsets")
        cached = read_cache(path, rows=False)
        if str(hi) not in cached:
            errors = {}
            for o in range(FIRST_OPSET, hi + 1):
                res = sandbox.run(_opset_model(o), {"x": np.ones(2, np.float32)}, timeout=clock.run_timeout())
                cached[str(o)] = res.status == "ok"
                if res.status != "ok":
                    errors[o] = f"{res.status}: {str(res.error)[:200]}"
            _write_json(path, cached)
            if cc.debug:
                for o, e in errors.items():
                    say(f"  opset {o}: {e}")
        ok = [o for o in range(FIRST_OPSET, hi + 1) if cached.get(str(o))]
        if not ok:
            raise NNFuzzError(f"{sandbox.backend_info.name} ran a one-node model at none of the opsets "
                              f"{FIRST_OPSET}..{hi} (see debug=true); set export.opset to one it reads")
        first = ok[0]
        last = next((o - 1 for o in range(first, hi + 1) if o not in ok), hi)
        lo, hi = max(lo, first), min(hi, last)
        say(f"probe: {sandbox.backend_info.name} reads opsets {first}..{last} (cache {path})")
    if lo > hi:
        raise NNFuzzError(f"the systems compared read no common opset; set export.opset")
    return dataclasses.replace(cc.export, opsets=(lo, hi))


def _opset_model(opset: int) -> bytes:
    from onnx import TensorProto, helper

    ops = [helper.make_opsetid("", opset)]
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "opset_probe",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    return helper.make_model(g, opset_imports=ops, ir_version=helper.find_min_ir_version_for(ops)).SerializeToString()


def read_cache(path: Path, rows: bool) -> dict:
    """A probe cache file ({op: {row: bool}} when ``rows``, else {opset: bool}); {} when there is none,
    and when it is corrupt or truncated (a campaign killed while writing it, a full disk): then it is
    probed again, with a warning that names the file."""
    if not path.is_file():
        return {}
    try:
        cached = json.loads(path.read_text())
        if not isinstance(cached, dict) or not all(
                isinstance(v, dict) and all(isinstance(ok, bool) for ok in v.values()) if rows else isinstance(v, bool)
                for v in cached.values()):
            raise ValueError("not the probe cache's layout")
    except (OSError, UnicodeDecodeError, ValueError) as e:
        print(f"warning: the probe cache {path} is unreadable ({type(e).__name__}: {e}); probing again "
              "and rewriting it", file=sys.stderr, flush=True)
        return {}
    return cached


def _write_json(path: Path, obj) -> None:
    """Write through a temporary file of this process's own (two campaigns may probe at once)."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(obj, indent=1, sort_keys=True))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _class_rows(cls, policy) -> List[Row]:
    return [(cls.in_dtypes[k], cls.out_dtypes[k]) for k in allowed_rows(cls, policy.dtype_set)]


def _single_op_graphs(todo, cc) -> List[Tuple[type, Row, Optional[GraphIR]]]:
    out = []
    for k, (cls, row) in enumerate(todo):
        policy = dataclasses.replace(cc.policy, seed=k, max_nodes=1, max_attempts=60, graph_timeout_s=2.0)
        try:
            gir = _row_graph(cls, row, policy)
        except ConstraintError:
            gir = None  # no instance with this row under the policy: leave it enabled
        out.append((cls, row, gir))
    return out


def _row_graph(cls, row: Row, policy) -> GraphIR:
    """The graph that probes ``cls`` on ``row``: one node; for a row with a quantized-tensor type
    (DType.quant_only), the QuantizeLinear -> DequantizeLinear pair that holds it (such a type is never a
    graph input or output), per tensor, which probes the QuantizeLinear row and the DequantizeLinear row
    together."""
    from nnfuzz.abstract import OP_REGISTRY
    from nnfuzz.abstract.tensor import AbsTensor
    from nnfuzz.generate.symbolic import GraphGenerator

    held = [d for d in row[0] + row[1] if d.quant_only]
    if not held:  # the row in a plain form: not in blocks (an attribute some systems lack, probed apart:
        for k in range(PLAIN_TRIES):  # fuzz/qdq_opsets.py), which would disable the row's every form
            try:
                gir = GraphGenerator(dataclasses.replace(policy, seed=policy.seed + 100_003 * k), [cls],
                                     rows={cls.name: {row}}).generate()
            except ConstraintError:
                continue
            if all(getattr(inst.op, "block_size", None) is None for inst in gir.insts):
                return gir
        raise ConstraintError(f"no plain graph of {cls.name} on {row_key(row)} in {PLAIN_TRIES} tries")
    q = OP_REGISTRY["QuantizeLinear"](to=held[0], scale=0.05, zero_point=0, axis=None, saturate=True)
    shape = [2, 3]
    return GraphIR(vars={"x": AbsTensor(shape, DType.float32), "q": AbsTensor(shape, held[0]),
                         "y": AbsTensor(shape, DType.float32)},
                   inputs=["x"], insts=[Inst(q, ["x"], ["q"]), Inst(q.closing(), ["q"], ["y"])],
                   outputs=["y"]).check()


def _runs_at(sandbox, gir, spec, clock, engine) -> bool:
    """Whether one row's graph, unsupported at the newest opset, runs at the oldest one the campaign writes
    (or, for a type that came later, the first opset that writes it: int16, int4 and uint16 at 21):
    a kernel missing only for the op's newest version (ONNX Runtime 1.32 reads opset 28 but has no
    QuantizeLinear(28)). The row stays enabled; models drawn at the newer opsets are UNSUPPORTED verdicts."""
    from nnfuzz.materialize.model import build_model

    try:
        model = build_model(gir, 0, export=dataclasses.replace(spec, timeout_s=min(spec.timeout_s, clock.left())))
    except NNFuzzError:
        return False
    res = sandbox.run_model(model, model.oracle.input, timeout=clock.run_timeout())
    return judge(res, None, engine).outcome is not Outcome.UNSUPPORTED


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


def _probe_batches(sandbox, todo, cc, export, clock, cached, errors) -> None:
    """Probe ``todo`` rows a batch at a time; the one-op graphs are made per batch, inside the budget."""
    from nnfuzz.materialize.model import build_model
    from nnfuzz.materialize.onnx.direct import Unspellable

    engine = sandbox.backend_info.engine
    spec = _probe_spec(export)
    chunks = [todo[i:i + BATCH] for i in range(0, len(todo), BATCH)][::-1]  # popped from the end: in order
    stack = []
    budget_end = time.monotonic() + max(3.0, 0.3 * cc.time_s)
    while (stack or chunks) and clock.left() > 1.0 and time.monotonic() < budget_end:
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
            model = build_model(merge([g for _, _, g in batch]), 0, export=dataclasses.replace(
                spec, timeout_s=min(spec.timeout_s, clock.left())) if sandbox.format == "onnx" else False)
        except InternalError:  # a bug in nnfuzz: shown, never taken for an op that does not export
            raise
        except Unspellable as e:  # an op x dtype ONNX cannot write at the campaign's opsets: not offered
            if len(batch) > 1:
                stack += [batch[: len(batch) // 2], batch[len(batch) // 2:]]
            else:
                cls, row, _ = batch[0]
                cached.setdefault(cls.name, {})[row_key(row)] = False
                errors[f"{cls.name}[{row_key(row)}]"] = str(e)
            continue
        except NNFuzzError:
            if len(batch) > 1:
                stack += [batch[: len(batch) // 2], batch[len(batch) // 2:]]
            continue  # a single op that will not export is left enabled; the campaign reports it
        res = sandbox.run_model(model, model.oracle.input, timeout=clock.run_timeout())
        verdict = judge(res, None, engine)
        if verdict.outcome is Outcome.UNSUPPORTED and len(batch) > 1:
            stack += [batch[: len(batch) // 2], batch[len(batch) // 2:]]
            continue
        ok = verdict.outcome is not Outcome.UNSUPPORTED
        if not ok and sandbox.format == "onnx" and export.range[0] < spec.opset:
            ok = _runs_at(sandbox, batch[0][2], dataclasses.replace(  # (or the first opset that writes it:
                spec, opset=export.range[0], opsets=(export.range[0], spec.opset)), clock, engine)  # int16 at 21)
        for cls, row, _ in batch:
            cached.setdefault(cls.name, {})[row_key(row)] = ok
            if not ok:
                errors[f"{cls.name}[{row_key(row)}]"] = verdict.summary
