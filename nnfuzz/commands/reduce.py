"""`nnfuzz reduce bugs/0042/`: shrink a saved bug while its signature holds (the driver is
triage/bug_reduction.py: delete nodes, then shrink shapes and attributes by re-solving the constraints).

The original files move to ``bugs/0042/original/``; the reduced model, gir.json, oracle.pkl and
meta.json (with ``reduced``: nodes before/after, trials, seconds) take their place, and the result is
re-checked the way ``nnfuzz repro`` does. A bug whose signature no smaller graph keeps is left
untouched. Exit codes: 0 reduced (or nothing to remove), 1 the signature could not be checked or was
lost on re-check (bug untouched), 2 bad arguments or a malformed bug folder.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def run(cfg, positional, overrides) -> int:
    from omegaconf import OmegaConf

    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.triage.bugstore import load_bug
    from nnfuzz.triage.bug_reduction import reduce_bug

    paths = [a for a in positional if not a.startswith("--")]
    if len(paths) != 1 or len(paths) != len(positional):
        print(f"usage: nnfuzz reduce <bug folder> [reduce_s=120]; got {positional}", file=sys.stderr)
        return 2
    budget = cfg.reduce_s
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget <= 0:
        from nnfuzz.errors import ConfigError

        raise ConfigError(f"reduce_s={budget!r} must be a number of seconds > 0, e.g. reduce_s=60")
    bug = load_bug(Path(paths[0]))
    if bug.gir_text is None:
        print(f"nnfuzz reduce: {bug.path} has no gir.json; only nnfuzz's own bug folders can be reduced",
              file=sys.stderr)
        return 2
    if (bug.path / "original").exists():
        print(f"nnfuzz reduce: {bug.path} is already reduced (its original is in original/)", file=sys.stderr)
        return 0
    tolerances = {k: tuple(v) for k, v in OmegaConf.to_container(cfg.fuzz.tolerances).items()}
    with Sandbox(bug.meta.system, bug.meta.backend_options, test_timeout=float(cfg.fuzz.test_timeout),
                 memory_limit_mb=int(cfg.fuzz.memory_limit_mb)) as sandbox:
        sandbox.start()
        result = reduce_bug(bug, sandbox, tolerances, float(budget))
    print(json.dumps(result))
    return 0 if result["status"] in ("reduced", "minimal") else 1
