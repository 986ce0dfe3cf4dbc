"""Accuracy budgets against real kernels: each op x dtype's own error, in ulps, on ort-cpu, openvino-cpu
and tvm-cpu (issue 26 item 2; the budgets: nnfuzz/abstract/accuracy.py, docs/accuracy.md).

Random single-op models: for every op and dtype row the generator offers (the ops with an ONNX
lowering), ``--seeds`` one-node graphs are grown as a campaign grows them (value-aware generation and the
value search, int64 kept within 32 bits so that OpenVINO's int64-as-int32 stays out of the figures).
Their nodes are merged side by side into models of ``--batch`` nodes (one compile per batch: TVM compiles
are slow), every node output exposed, and run in this process on each system; a batch that fails is
split in halves until the failing nodes are alone (counted as ``err``, not measured). Each node's outputs
are judged by ``node_errors`` (nnfuzz/triage/local_error.py) against the numpy reference on its inputs,
with the system's precision allowance as a campaign applies it. TVM's batches alternate between ONNX
import and Relax-native models (``--tvm-format``). tvm-cpu gets ``--tvm-seeds`` seeds (default 1).

Migrated ONNX node tests (on unless ``--no-onnx-node``; on tvm-cpu only with ``--tvm-node-tests``: one
compile per test, about 6 minutes more): each single-node case whose op type names one of nnfuzz's ops
(or an alias below) runs on each system, measured against the test's expected outputs by the
same ulp measure and that op's budget (the expected outputs were computed by numpy, often in the output
dtype: a correct kernel may show an ulp or so more than against the float64 reference).

Prints a table per system: op, dtype row, samples, median / p99 / max ulps, budget (its range over the
samples' shapes), ``over`` (samples beyond their budget, with their kind), ``err`` (runs that failed).
Rows with a sample beyond its budget are flagged ``!``.

    python benchmarks/ulp_calibration.py [--systems ort-cpu,openvino-cpu,tvm-cpu] [--seeds 3]
        [--tvm-seeds 1] [--ops Add,Exp] [--batch 40] [--tvm-format mix|onnx|relax] [--no-onnx-node]
        [--tvm-node-tests] [--f32-grid] [--only-over] [--json FILE]

About 8 minutes for the three systems on 2 cores (generation 1, ort-cpu 2, openvino-cpu 3, tvm-cpu 3).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
import warnings
from collections import defaultdict
from typing import Dict, List, Optional

import numpy as np

SYSTEMS = ("ort-cpu", "openvino-cpu", "tvm-cpu")
OPTIONS = {"tvm-cpu": {"format": "mix"}}
# ONNX op types whose node tests measure one of nnfuzz's ops of another name (same accuracy rule)
ALIASES = {"Conv": "Conv2d", "ConvTranspose": "ConvTranspose2d", "BatchNormalization": "BatchNorm",
           "InstanceNormalization": "InstanceNorm", "LayerNormalization": "LayerNorm",
           "GroupNormalization": "GroupNorm", "AveragePool": "AvgPool2d", "MaxPool": "MaxPool2d",
           "GlobalAveragePool": "GlobalAvgPool", "ReduceLogSumExp": "LogSumExp", "Mean": "Add"}


@dataclasses.dataclass
class Sample:
    op: str
    row: str
    seed: int
    gir: object                 # the one-node GraphIR
    weights: Dict[str, np.ndarray]
    inputs: Dict[str, np.ndarray]


@dataclasses.dataclass
class Measured:
    system: str
    op: str
    row: str
    seed: int
    ulps: float
    budget: float
    kind: Optional[str]
    note: str = ""
    source: str = "random"      # random | onnx-node:<test>
    fmt: str = "onnx"


def row_label(row) -> str:
    ins, outs = row
    names = {d.value for d in (*ins, *outs)}
    if len(names) == 1:
        return names.pop()
    return ",".join(d.value for d in ins) + "->" + ",".join(d.value for d in outs)


def offered(ops_filter):
    """(op class, row) for every row the generator offers to ONNX systems."""
    from nnfuzz.fuzz.probe import _class_rows
    from nnfuzz.generate import GenPolicy
    from nnfuzz.generate.opset import select_ops, usable_with

    policy = GenPolicy()
    ops = select_ops(policy, usable=usable_with({"torch"}, "onnx"))
    if ops_filter:
        unknown = sorted(set(ops_filter) - {c.name for c in ops})
        if unknown:
            sys.exit(f"--ops names {unknown}, not ops offered to ONNX systems; valid: {sorted(c.name for c in ops)}")
        ops = [c for c in ops if c.name in ops_filter]
    return [(c, r) for c in ops for r in _class_rows(c, policy)]


def make_samples(pairs, seeds: int, counts, full_f64: bool = True) -> List[Sample]:
    """One-node graphs with safe values, as a campaign makes them; rows with none are counted."""
    from nnfuzz.errors import ConstraintError, NNFuzzError
    from nnfuzz.generate import GenPolicy
    from nnfuzz.generate.valueaware import generate_with_values
    from nnfuzz.materialize.model import build_model
    from nnfuzz.materialize.search import SearchConfig

    cfg = SearchConfig(int64_bits=32)
    out = []
    for cls, row in pairs:
        for s in range(seeds):
            policy = GenPolicy(seed=s, max_nodes=1, max_attempts=60, graph_timeout_s=2.0)
            try:
                gir, w, i, _ = generate_with_values(policy, [cls], {cls.name: {row}}, cfg)
                model = build_model(gir, s, export=False, search=cfg, start=(w, i))
            except (ConstraintError, NNFuzzError) as e:
                counts["no-graph" if isinstance(e, ConstraintError) else "nnfuzz-error"] += 1
                continue
            if model.oracle.output is None:
                counts["undefined"] += 1
                continue
            weights, inputs = model.weights, model.oracle.input
            if full_f64:
                weights, inputs = full_precision(gir, s, weights, inputs)
            out.append(Sample(cls.name, row_label(row), s, gir, weights, inputs))
    return out


def full_precision(gir, seed, weights, inputs):
    """The values with every non-integral float64 element moved by a relative 2**-30 or less: drawn values
    sit on float32's grid, where a float64 kernel computing in float32 would show no error. Zeros, signs
    and integral values stay; if the reference is then undefined the drawn values are kept."""
    from nnfuzz.materialize.model import build_model

    rng = np.random.default_rng([seed, 0xF64])

    def move(vals):
        out = {}
        for n, a in vals.items():
            a = np.asarray(a)
            if a.dtype == np.float64:
                a = np.where(a == np.round(a), a, a * (1.0 + rng.uniform(-2.0 ** -30, 2.0 ** -30, a.shape)))
            out[n] = a
        return out

    w, i = move(weights), move(inputs)
    if all(np.array_equal(w[n], weights[n]) for n in w) and all(np.array_equal(i[n], inputs[n]) for n in i):
        return weights, inputs
    if build_model(gir, seed, export=False, values=(w, i)).oracle.output is None:
        return weights, inputs
    return w, i


def merged(batch: List[Sample]):
    """The batch's graphs side by side, every output exposed, with their values renamed alike."""
    from nnfuzz.fuzz.probe import merge
    from nnfuzz.triage.localize import expose_all

    gir = expose_all(merge([s.gir for s in batch]))
    weights, inputs = {}, {}
    for k, s in enumerate(batch):
        weights.update({f"g{k}_{n}": a for n, a in s.weights.items()})
        inputs.update({f"g{k}_{n}": a for n, a in s.inputs.items()})
    return gir, weights, inputs


def run_batches(system, backend, samples, size, export, formats, widened, res, errors) -> None:
    """Batches of ``size`` nodes, formats taken in turn (a Relax-native batch only of ops with a Relax
    lowering); a failed batch is split in halves, each half keeping the batch's format."""
    from nnfuzz.materialize.relax.lowering import relax_lowerable

    if "relax" in formats:
        relax = [s for s in samples if relax_lowerable([s.op])]
        rest = [s for s in samples if not relax_lowerable([s.op])]
    else:
        relax, rest = [], samples
    stack, k = [], 0
    for group in (relax, rest):
        for i in range(0, len(group), size):
            fmt = formats[k % len(formats)] if group is relax else next(f for f in formats if f != "relax")
            stack.append((group[i:i + size], fmt))
            k += 1
    stack.reverse()
    while stack:
        batch, fmt = stack.pop()
        k += 1
        got, why = run_one(backend, batch, export, fmt, k)
        if got is None:
            if len(batch) > 1:
                stack += [(batch[len(batch) // 2:], fmt), (batch[: len(batch) // 2], fmt)]
            else:
                errors[(system, batch[0].op, batch[0].row)].append(why)
            continue
        for j, s in enumerate(batch):
            res.append(judge(system, s, j, got, widened, fmt))


def run_one(backend, batch, export, fmt, k):
    from nnfuzz.materialize.model import build_model
    from nnfuzz.materialize.portable import pack

    gir, weights, inputs = merged(batch)
    try:
        if fmt == "relax":
            payload = pack(gir.dumps(), weights, k)
        else:
            model = build_model(gir, k, export=export.for_model(k), values=(weights, inputs))
            payload = model.onnx.SerializeToString()
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = backend.run(backend.compile(payload), inputs)
    except Exception as e:  # noqa: BLE001 - a failing batch is split; a lone failure is counted with its error
        return None, f"{type(e).__name__}: {str(e).strip().splitlines()[-1][:160] if str(e).strip() else ''}"
    return {n: np.asarray(a) for n, a in out.items()}, ""


def judge(system, s: Sample, j: int, got, widened, fmt) -> Measured:
    from nnfuzz.triage.local_error import node_errors

    inst = s.gir.insts[0]
    env = {**s.inputs, **s.weights}
    outs = {v: got.get(f"g{j}_{v}") for v in inst.outputs}
    try:
        errs = node_errors(inst.op, 0, [np.asarray(env[v]) for v in inst.inputs], outs,
                           {v: s.gir.vars[v].dtype for v in inst.outputs}, widened)
    except Exception as e:  # noqa: BLE001 - shown in the table as a failed judgement
        return Measured(system, s.op, s.row, s.seed, float("nan"), 0.0, "judge-error", f"{type(e).__name__}: {e}",
                        fmt=fmt)
    worst = max(errs, key=lambda e: (e.kind is not None, e.ulps / e.budget if e.budget else e.ulps))
    return Measured(system, s.op, s.row, s.seed, worst.ulps, worst.budget, worst.kind, worst.note, fmt=fmt)


def onnx_node(system, backend, names, res, errors) -> int:
    """The migrated ONNX node tests of nnfuzz's ops, measured against their expected outputs."""
    from nnfuzz.abstract.dtype import DType
    from nnfuzz.generate import GenPolicy
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.migrate.onnx_node import cases, migrate_case
    from nnfuzz.migrate.record import Dropped
    from nnfuzz.triage.local_error import NodeError, _judge_float
    from nnfuzz.verdict import DEFAULT_TOLERANCES

    classes = {c.name: c for c in select_ops(GenPolicy())}
    n = 0
    for case in cases(multi_node=False):
        op_type = case.model.graph.node[0].op_type
        cls = classes.get(ALIASES.get(op_type, op_type))
        if cls is None or (names and cls.name not in names):
            continue
        try:
            tests = list(migrate_case(case, DEFAULT_TOLERANCES))
        except Dropped:
            continue
        for t in tests:
            if t.undefined:
                continue
            n += 1
            row = row_label((tuple(DType.parse(str(a.dtype)) for a in t.inputs.values()),
                             tuple(DType.parse(str(a.dtype)) for a in t.outputs.values())))
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    got = backend.run(backend.compile(t.model_bytes), dict(t.inputs))
            except Exception as e:  # noqa: BLE001 - counted per row
                errors[(system, cls.name, row)].append(f"{t.test}: {type(e).__name__}")
                continue
            budget = cls.accuracy.budget([a.shape for a in t.inputs.values()], [a.shape for a in t.outputs.values()])
            floats = [a for a in t.inputs.values() if a.dtype.kind == "f"]
            scale_in = max((float(np.max(np.abs(a), initial=0)) for a in floats), default=0.0) if budget else 0.0
            worst = None
            for name, want in t.outputs.items():
                have = np.asarray(got.get(name)) if name in got else None
                dt = str(want.dtype)
                e = NodeError(0, cls.name, name, dt, None, 0.0, budget)
                if have is None or have.shape != want.shape:
                    e.kind = "shape"
                elif dt in ("float16", "float32", "float64", "bfloat16"):
                    _judge_float(e, want.astype(np.float64), have.astype(np.float64), None, scale_in)
                else:
                    e.ulps = float(np.sum(have != want))
                    e.kind = "values" if e.ulps else None
                if worst is None or (e.kind is not None, e.ulps) > (worst.kind is not None, worst.ulps):
                    worst = e
            res.append(Measured(system, cls.name, row, 0, worst.ulps, worst.budget, worst.kind, worst.note,
                                source=f"onnx-node:{t.test}"))
    return n


def opsets(systems):
    """The opset range every system read when its probe cache was written (17 alone without caches)."""
    from nnfuzz.backends.base import BackendInfo
    from nnfuzz.backends.registry import get_backend
    from nnfuzz.fuzz.probe import cache_path

    lo, hi = 13, 99
    for name in systems:
        path = cache_path(BackendInfo.of(get_backend(name, **OPTIONS.get(name, {}))), "opsets")
        if not path.is_file():
            return 17, 17
        ok = sorted(int(k) for k, v in json.loads(path.read_text()).items() if v)
        lo, hi = max(lo, ok[0]), min(hi, ok[-1])
    return (lo, hi) if lo <= hi else (17, 17)


def table(system, res: List[Measured], errors, only_over: bool) -> List[str]:
    groups = defaultdict(list)
    for m in res:
        if m.system == system:
            groups[(m.op, m.row, m.source.split(":")[0])].append(m)
    keys = sorted(set(groups) | {(o, r, "random") for (s, o, r) in errors if s == system})
    lines = [f"{'':1} {'op':<26} {'dtype':<22} {'src':<6} {'n':>4} {'median':>9} {'p99':>9} {'max':>9} "
             f"{'budget':>13} {'over':>5} {'err':>4}"]
    for op, row, src in keys:
        ms = groups.get((op, row, src), [])
        err = len(errors.get((system, op, row), [])) if src == "random" else 0
        u = np.array([m.ulps for m in ms if np.isfinite(m.ulps)])
        over = [m for m in ms if m.kind is not None]
        if only_over and not over:
            continue
        b = [m.budget for m in ms] or [0.0]
        bud = f"{min(b):g}" if min(b) == max(b) else f"{min(b):g}..{max(b):g}"
        kinds = ",".join(sorted({m.kind for m in over}))
        mx = max((m.ulps for m in ms), default=float("nan"))
        lines.append(f"{'!' if over else ' '} {op:<26} {row[:22]:<22} {src[:6]:<6} {len(ms):>4} "
                     f"{_f(np.median(u) if u.size else np.nan)} {_f(np.percentile(u, 99) if u.size else np.nan)} {_f(mx)} {bud:>13} "
                     f"{len(over):>5} {err:>4}" + (f"  {kinds}" if kinds else ""))
    return lines


def _f(x) -> str:
    if not np.isfinite(x):
        return f"{str(x):>9}"
    return f"{x:>9.3g}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated backends (default: the three)")
    ap.add_argument("--seeds", type=int, default=3, help="random models per op x dtype row (default 3)")
    ap.add_argument("--tvm-seeds", type=int, default=1, help="of those, how many tvm-cpu runs (default 1)")
    ap.add_argument("--ops", default="", help="comma-separated op names (default: every op)")
    ap.add_argument("--batch", type=int, default=40, help="nodes merged into one model (default 40)")
    ap.add_argument("--tvm-format", default="mix", choices=("mix", "onnx", "relax"),
                    help="TVM's models: ONNX import, Relax-native, or batches alternating (default mix)")
    ap.add_argument("--f32-grid", action="store_true",
                    help="keep float64 values as drawn (on float32's grid) instead of moving them off it")
    ap.add_argument("--no-onnx-node", action="store_true", help="skip the migrated ONNX node tests")
    ap.add_argument("--tvm-node-tests", action="store_true",
                    help="run the ONNX node tests on tvm-cpu too (one compile each: about 6 minutes more)")
    ap.add_argument("--only-over", action="store_true", help="print only rows with a sample beyond its budget")
    ap.add_argument("--json", default="", help="write every measurement to this file")
    a = ap.parse_args(argv)
    from nnfuzz.backends.registry import backend_class, get_backend
    from nnfuzz.materialize.onnx.spec import ExportSpec

    systems = [s for s in a.systems.split(",") if s]
    names = {o for o in a.ops.split(",") if o}
    t0 = time.perf_counter()
    counts = defaultdict(int)
    pairs = offered(names)
    samples = make_samples(pairs, max(a.seeds, a.tvm_seeds), counts, not a.f32_grid)
    print(f"{len(pairs)} op x dtype rows, {len(samples)} one-node models in {time.perf_counter() - t0:.0f}s "
          f"(left out: {dict(counts) or 'none'})", flush=True)
    lo, hi = opsets(systems)
    export = ExportSpec(opset=None, opsets=(lo, hi))
    res: List[Measured] = []
    errors = defaultdict(list)
    timing = {}
    for system in systems:
        t1 = time.perf_counter()
        opts = dict(OPTIONS.get(system, {}))
        if system == "tvm-cpu":
            opts["format"] = a.tvm_format
        backend = get_backend(system, **opts)
        formats = tuple(getattr(backend, "draw_formats", ())) or ("onnx",)
        widened = tuple(backend_class(system).precision_allowance)
        seeds = a.tvm_seeds if system.startswith("tvm") else a.seeds
        mine = [s for s in samples if s.seed < seeds]
        run_batches(system, backend, mine, a.batch, export, formats, widened, res, errors)
        t_random = time.perf_counter() - t1
        node = not a.no_onnx_node and (a.tvm_node_tests or not system.startswith("tvm"))
        n_node = onnx_node(system, backend, names, res, errors) if node else 0
        timing[system] = time.perf_counter() - t1
        print(f"\n== {system} {backend.version}: {len(mine)} random models ({seeds} seed(s) per row, "
              f"formats {'/'.join(formats)}) in {t_random:.0f}s, {n_node} ONNX node tests in "
              f"{timing[system] - t_random:.0f}s; opsets {lo}..{hi}")
        print("\n".join(table(system, res, errors, a.only_over)), flush=True)
    print(f"\ntotal {time.perf_counter() - t0:.0f}s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"timing_s": timing, "left_out": dict(counts),
                       "errors": [{"system": s, "op": o, "row": r, "why": w} for (s, o, r), ws in errors.items()
                                  for w in ws],
                       "measured": [dataclasses.asdict(m) for m in res]}, f, indent=0, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
