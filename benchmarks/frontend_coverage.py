"""Line coverage of TVM's Relax ONNX frontend (``tvm/relax/frontend/onnx/``) reached by importing and
building N generated models in one process, for each way of writing the ONNX files:

- ``torch``:  torch's TorchScript exporter at opset 17 (the path before direct lowering);
- ``onnx-17``: written directly, opset 17, canonical spellings;
- ``onnx-random``: written directly, opsets drawn from 13..newest and spellings drawn per node.

The same graphs (same seeds, the ops both paths can write) go through each; each configuration runs in
a fresh process so coverage starts from the same import state. Prints covered lines, the ratio to the
torch path, and how many models the frontend or the build refused (a refusal still covers lines).

    python benchmarks/frontend_coverage.py [--models 300] [--nodes 10] [--no-build] [--quantized 0.3]

``--quantized SHARE`` makes that share of the graphs QDQ graphs (mgen.quantized, nnfuzz/generate/qdq.py),
written at opset 25 at most (QDQ_MAX_OPSET; a campaign probes the bound, fuzz/qdq_opsets.py): the frontend's QuantizeLinear and
DequantizeLinear converters are reached only then. Compare a run with ``--quantized 0`` (the default) and
one with ``--quantized 0.3`` (docs/quantization.md).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CONFIGS = ("torch", "onnx-17", "onnx-random")


def spec_for(config: str):
    from nnfuzz.materialize.onnx.spec import ExportSpec

    return {"torch": ExportSpec(via="torch", opset=17), "onnx-17": ExportSpec(opset=17, spelling="canonical"),
            "onnx-random": ExportSpec(opset=None)}[config]


QDQ_MAX_OPSET = 25  # the quantized graphs' newest opset (TVM 0.27's converters; fuzz/qdq_opsets.py probes it)


def measure(config: str, n_models: int, nodes: int, build: bool, guide: str = "none", quantized: float = 0.0) -> dict:
    """In this process: coverage of the frontend over ``n_models`` models written by ``config``, their
    graphs drawn with coverage guidance ``guide`` (mgen.guide; benchmarks/diversity.py compares them)."""
    import dataclasses
    import os

    import coverage

    import tvm
    from nnfuzz.generate import GenPolicy
    from nnfuzz.generate.opset import select_ops, usable_with
    from nnfuzz.generate.symbolic import GraphGenerator
    from nnfuzz.materialize.model import build_model

    frontend = os.path.join(os.path.dirname(tvm.__file__), "relax", "frontend", "onnx")
    cov = coverage.Coverage(include=[os.path.join(frontend, "*")], data_file=None)
    from nnfuzz.generate.guide import Guide, graph_coverage

    policy = GenPolicy(max_nodes=nodes, guide=guide)
    state = Guide() if guide == "coverage" else None
    direct, exporter = usable_with({"torch"}, "onnx"), usable_with({"torch"}, "torch")
    ops = select_ops(policy, usable=lambda c: direct(c) and exporter(c))  # the ops both paths write
    spec = spec_for(config)
    counts = {"models": 0, "import_failed": 0, "build_failed": 0, "not_written": 0, "quantized": 0}  # not_written: no graph, or the path could not write it
    cov.start()
    from tvm.relax.frontend.onnx import from_onnx
    t0 = time.perf_counter()
    for seed in range(n_models):
        try:
            gir, model_spec = _graph(policy, seed, ops, state, quantized, spec.for_model(seed))
            if state is not None:
                state.state.add(graph_coverage(gir))
            model = build_model(gir, seed, export=model_spec)
            counts["quantized"] += any(i.op.name == "QuantizeLinear" for i in gir.insts)
        except Exception:  # noqa: BLE001 - counted: a model this path could not write covers nothing
            counts["not_written"] += 1
            continue
        counts["models"] += 1
        try:
            mod = from_onnx(model.onnx, keep_params_in_input=False)
        except Exception:  # noqa: BLE001 - the frontend refusing a model is a measured outcome
            counts["import_failed"] += 1
            continue
        if build:
            try:
                tvm.compile(mod, target="llvm")
            except Exception:  # noqa: BLE001 - as above, for the build
                counts["build_failed"] += 1
    cov.stop()
    covered, total = 0, 0
    for f in cov.get_data().measured_files():
        _, statements, _, missing, _ = cov.analysis2(f)
        total += len(statements)
        covered += len(statements) - len(missing)
    return {"config": config, "covered": covered, "statements": total, "seconds": time.perf_counter() - t0, **counts}


def _graph(policy, seed, ops, state, share, spec):
    """(the graph for ``seed``, its export spec): a QDQ graph for a ``share`` of the seeds (at an opset up
    to QDQ_MAX_OPSET), else a plain one."""
    import dataclasses

    import numpy as np

    from nnfuzz.generate.qdq import insert_qdq, quantized_draw
    from nnfuzz.generate.symbolic import GraphGenerator
    from nnfuzz.materialize.model import random_values

    policy = dataclasses.replace(policy, seed=seed)
    qdq = quantized_draw(policy, share, seed, ops)
    gir = GraphGenerator(qdq or policy, ops, guide=state).generate()
    if qdq is None:
        return gir, spec
    gir, _ = insert_qdq(gir, seed, random_values(gir, np.random.default_rng(seed)))
    return gir, spec.at(min(spec.opset, QDQ_MAX_OPSET)) if spec.opset else spec


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=300)
    ap.add_argument("--nodes", type=int, default=10)
    ap.add_argument("--no-build", action="store_true", help="import only (no tvm.compile)")
    ap.add_argument("--one", choices=CONFIGS, help=argparse.SUPPRESS)  # the child process's configuration
    ap.add_argument("--guide", choices=("none", "coverage"), default="none", help="mgen.guide of the graphs")
    ap.add_argument("--quantized", type=float, default=0.0, help="the share of QDQ graphs (mgen.quantized)")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.models, args.nodes, not args.no_build, args.guide, args.quantized)))
        return
    rows = []
    for config in CONFIGS:
        cmd = [sys.executable, __file__, "--one", config, "--models", str(args.models), "--nodes", str(args.nodes),
               "--guide", args.guide, "--quantized", str(args.quantized)]
        out = subprocess.run(cmd + (["--no-build"] if args.no_build else []), capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{config}: the measuring process failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    base = rows[0]["covered"] or 1
    print(f"TVM Relax ONNX frontend line coverage, {args.models} models of {args.nodes} nodes, "
          f"{'import + build' if not args.no_build else 'import only'}, quantized share {args.quantized}")
    for r in rows:
        print(f"{r['config']:12s} {r['covered']:5d}/{r['statements']} lines ({r['covered'] / base:.2f}x torch)  "
              f"models {r['models']}, not written {r['not_written']}, import failed {r['import_failed']}, "
              f"build failed {r['build_failed']}, QDQ graphs {r['quantized']}  ({r['seconds']:.0f}s)")


if __name__ == "__main__":
    main()
