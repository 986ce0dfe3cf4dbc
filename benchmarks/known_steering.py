"""How many default models stop at a known refusal in TVM's ONNX import, with and without steering away
from known bugs' triggers (fuzz.steer_known, nnfuzz/triage/known.py).

N models are generated as a tvm-cpu campaign makes them (default mgen policy, coverage guidance, the
ops the ONNX path writes, tvm-cpu's probed op x dtype rows when its probe cache is on this machine,
opsets and spellings drawn per model), written as ONNX and imported with
``tvm.relax.frontend.onnx.from_onnx`` (no build). Each refusal is classified:

- ``kept``: the crash signature (triage/dedup.py) of a bug kept in ``bugs/kept/`` for tvm-cpu;
- ``known limitation``: an UNSUPPORTED pattern of TVM's backend knowledge (nnfuzz/backends/tvm_knowledge.py);
- ``other``: neither (a new refusal).

With ``--steer`` the known bugs (kept folders and known file, with fuzz.known's defaults) steer the
generator, as a campaign with ``fuzz.steer_known=true`` does: their op x dtype rows are left out of
the rows the generator draws from, and their spellings are not drawn. It is a count, not a timing.

    python benchmarks/known_steering.py [--models 300] [--steer]
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import io
import dataclasses
import json
import re
import sys


def probe_rows() -> dict:
    """tvm-cpu's probed rows from this machine's probe cache (the largest tvm-cpu file), or {}."""
    from nnfuzz.fuzz.probe import cache_dir, parse_row

    files = sorted(cache_dir().glob("tvm-cpu-*.json"), key=lambda p: p.stat().st_size) if cache_dir().is_dir() else []
    if not files:
        return {}
    cached = json.loads(files[-1].read_text())
    return {op: {parse_row(k) for k, ok in rows.items() if ok} for op, rows in cached.items()}


def classify(error: BaseException, printed: str, kept: dict) -> str:
    from nnfuzz.backends.known import classify as known_limitation
    from nnfuzz.triage.dedup import signature
    from nnfuzz.triage.meta import BugMeta

    text = f"{type(error).__name__}: {error}"
    if known_limitation("tvm", text) is not None:
        return "known limitation"
    meta = BugMeta(system="tvm-cpu", symptom="crash", stage="compile", summary=text.splitlines()[0][:300])
    sig = signature(meta, f"{printed}\n{text}")
    return f"kept {kept[sig]}" if sig in kept else "other"


def measure(n: int, steer: bool) -> dict:
    from tvm.relax.frontend.onnx import from_onnx

    from nnfuzz.generate import GenPolicy
    from nnfuzz.generate.guide import Guide, graph_coverage
    from nnfuzz.generate.opset import select_ops, usable_with
    from nnfuzz.generate.symbolic import GraphGenerator
    from nnfuzz.materialize.model import build_model
    from nnfuzz.materialize.onnx.spec import ExportSpec
    from nnfuzz.triage.known import load_known

    known = load_known()
    kept = {sig: folder for sig, folder in known.folder_signatures().items() if sig.startswith("tvm-cpu |")}
    policy = GenPolicy()
    ops = select_ops(policy, usable=usable_with({"torch"}, "onnx"))
    rows = probe_rows()
    spec = ExportSpec(opset=None)
    if steer:
        from nnfuzz.generate.steer import steer as steer_known

        ops, rows, spec, _ = steer_known(known.triggers("tvm-cpu"), ops, rows, spec, policy)
    guide = Guide()
    out, others = collections.Counter(), collections.Counter()
    for seed in range(n):
        try:
            gir = GraphGenerator(dataclasses.replace(policy, seed=seed), ops, rows=rows, guide=guide).generate()
            guide.state.add(graph_coverage(gir))
            model = build_model(gir, seed, export=spec.for_model(seed))
        except Exception as e:  # noqa: BLE001 - a model nnfuzz could not write is counted apart
            out[f"not written ({type(e).__name__})"] += 1
            continue
        said = io.StringIO()  # the frontend prints the op it failed on ("Error converting operator X"), as in err.log
        try:
            with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
                from_onnx(model.onnx, keep_params_in_input=False)
            out["imported"] += 1
        except Exception as e:  # noqa: BLE001 - the frontend refusing a model is the measured outcome
            what = classify(e, said.getvalue(), kept)
            out[what] += 1
            if what == "other":
                from nnfuzz.triage.dedup import normalize

                others[normalize(f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}")[:100]] += 1
    return {**out, "top_other": others.most_common(8)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=300)
    ap.add_argument("--steer", action="store_true", help="steer away from the known bugs' triggers")
    args = ap.parse_args()
    counts = measure(args.models, args.steer)
    top = counts.pop("top_other")
    kept = sum(v for k, v in counts.items() if k.startswith("kept"))
    limits = counts.get("known limitation", 0)
    print(json.dumps({"models": args.models, "steer": args.steer, "kept_refusals": kept,
                      "known_limitation_refusals": limits, "counts": dict(sorted(counts.items())),
                      "top_other": top}))
    print(f"{'steered' if args.steer else 'unsteered'}: {kept} of {args.models} models stop at a refusal of a kept "
          f"bug, {limits} at a known limitation (UNSUPPORTED), {counts.get('other', 0)} at another refusal",
          file=sys.stderr)


if __name__ == "__main__":
    main()
