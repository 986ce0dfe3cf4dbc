"""`nnfuzz generate`: write n random valid models, one folder each.

Each folder holds model.onnx, gir.json, oracle.pkl (inputs and torch-eager outputs) and meta.json
(seed, policy, ops, the value search's outcome, timings). Model k uses graph seed ``mgen.seed + k``, where
``mgen.seed`` is drawn from the OS unless given (and printed); ``nnfuzz generate n=1 mgen.seed=<seed>``
with the same config rebuilds model k exactly. Numbering continues in a non-empty folder.
One line on stdout says what was written, or with ``--json`` one JSON document.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from nnfuzz.errors import ConstraintError, NNFuzzError
from nnfuzz.ui import Progress

EXIT_CODES = {0: "every model written", 1: "some models failed (messages above)", 2: "a configuration error"}


def next_index(out: Path) -> int:
    nums = [int(p.name) for p in out.iterdir() if p.is_dir() and p.name.isdigit()] if out.exists() else []
    return max(nums) + 1 if nums else 0


def run(cfg) -> int:
    import dataclasses

    import nnfuzz
    from nnfuzz.config import export_config, gen_policy, search_config
    from nnfuzz.generate.opset import select_ops, usable_with
    from nnfuzz.materialize.model import build_model
    from nnfuzz.output import result
    from nnfuzz.generate.valueaware import generate_for_search
    from nnfuzz.triage.folder import dump_oracle, write_bytes, write_folder_atomic, write_json

    policy = gen_policy(cfg).with_concrete_seed()
    search = search_config(cfg)
    export = export_config(cfg)
    n = int(cfg.n)
    if n < 1:
        from nnfuzz.errors import ConfigError

        raise ConfigError(f"n={n}; the number of models must be >= 1")
    ops = select_ops(policy, usable=usable_with({"torch"}, export.via))
    out = Path(str(cfg.out))
    start = next_index(out)
    failures = 0
    print(f"seed {policy.seed}: rerun with mgen.seed={policy.seed}", file=sys.stderr, flush=True)
    with Progress(n, "generate", str(cfg.ui)) as prog:
        for k in range(n):
            seed = policy.seed + k
            pol = dataclasses.replace(policy, seed=seed)
            t0 = time.perf_counter()
            try:
                gir, values = generate_for_search(pol, ops, None, search)
                t_gen = time.perf_counter() - t0
                model = build_model(gir, seed, export=export.for_model(seed), search=search, start=values)
            except ConstraintError as e:
                failures += 1
                prog.log(f"seed {seed}: no graph: {e}")
                prog.advance("failed")
                continue
            except NNFuzzError as e:
                failures += 1
                prog.log(f"seed {seed}: FAILED ({type(e).__name__}): {e}")
                prog.advance("failed")
                continue
            meta = {
                "seed": seed, "nnfuzz": nnfuzz.__version__, "nodes": gir.n_nodes, "ops": gir.op_names(),
                "finite": model.oracle.output is not None, "search": model.search, "policy": pol.to_dict(),
                "opset": model.export.opset, "export": model.export.record(model.spellings),
                "timings": {"gen_s": t_gen, **model.timings},
            }
            folder = out / f"{start + k:04d}"
            write_folder_atomic(folder, {
                "model.onnx": write_bytes(model.onnx.SerializeToString()),
                "gir.json": lambda p, g=gir: p.write_text(g.dumps()),
                "oracle.pkl": write_bytes(dump_oracle(model.oracle.to_dict())),
                "meta.json": write_json(meta),
            })
            prog.advance(f"{gir.n_nodes} nodes")
    result({"written": n - failures, "failed": failures, "seed": policy.seed, "out": str(out)},
           lambda: print(f"wrote {n - failures} of {n} models to {out}/ (seed {policy.seed})"))
    if failures:
        print(f"nnfuzz generate: {failures} of {n} models failed (see messages above)", file=sys.stderr)
    return 1 if failures else 0
