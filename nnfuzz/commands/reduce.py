"""`nnfuzz reduce bugs/0042/`: shrink a saved bug while its signature holds (the driver is
triage/bug_reduction.py: delete nodes, then shrink shapes and attributes by re-solving the constraints).

The original files move to ``bugs/0042/original/``; the reduced model, gir.json, oracle.pkl and
meta.json (with ``reduced``: nodes before/after, trials, seconds) take their place, and the result is
re-checked the way ``nnfuzz repro`` does. A bug whose signature no smaller graph keeps is left
untouched. A folder of a campaign's store is reduced holding that store's lock (fuzz/store_lock.py). A
gradient bug found against another system (xla-cpu's against TF eager, tf-cpu) runs each candidate on that
system too. A dynamic model's bug is reduced with its shape family kept (docs/dynamic-shapes.md). One line on
stdout says what changed, or with ``--json`` one JSON document.
"""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path

EXIT_CODES = {0: "reduced, or nothing to remove, or reduced already",
              1: "the signature could not be checked or was lost on re-check (the bug is untouched)",
              2: "bad arguments or a malformed bug folder"}
USAGE = "usage: nnfuzz reduce <bug folder> [reduce_s=120] [--json]"


def run(cfg, positional, overrides) -> int:
    from omegaconf import OmegaConf

    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.output import result as show
    from nnfuzz.triage.bugstore import load_bug
    from nnfuzz.triage.bug_reduction import expected_side, reduce_bug

    paths = [a for a in positional if not a.startswith("--")]
    if len(paths) != 1 or len(paths) != len(positional):
        unknown = [a for a in positional if a.startswith("--")]
        why = (f"unknown option {' '.join(unknown)}" if unknown else
               "which bug folder? name one, e.g. bugs/0000" if not paths else f"one bug folder, not {len(paths)}")
        print(f"nnfuzz reduce: {why}\n{USAGE}", file=sys.stderr)
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
        show({"bug": str(bug.path), "status": "reduced-already"},
             lambda: print(f"{bug.path}: reduced already (its original is in original/)"))
        return 0
    tolerances = {k: tuple(v) for k, v in OmegaConf.to_container(cfg.fuzz.tolerances).items()}

    scale = timeout_scale((bug.meta.oracle or {}).get("kind"))

    def sandbox_of(system, options):
        return Sandbox(system, options, test_timeout=float(cfg.fuzz.test_timeout) * scale,
                       memory_limit_mb=int(cfg.fuzz.memory_limit_mb))

    other = expected_side(bug) if bug.meta.grad is not None else None  # TF eager for an xla-cpu gradient bug
    with _store_of(bug.path), sandbox_of(bug.meta.system, bug.meta.backend_options) as sandbox, \
            (sandbox_of(*other) if other else contextlib.nullcontext()) as expected:
        sandbox.start()
        if expected is not None:
            expected.start()
        outcome = reduce_bug(bug, sandbox, tolerances, float(budget), expected=expected)
    show(outcome, lambda: print(f"{bug.path}: {outcome['status']}" + "".join(
        f", {k.replace('_', ' ')} {v}" for k, v in outcome.items() if k not in ("status", "bug", "note"))
        + (f" ({outcome['note']})" if outcome.get("note") else "")))
    return 0 if outcome["status"] in ("reduced", "minimal") else 1


def timeout_scale(kind) -> float:
    """The time a run of a bug found by oracle ``kind`` may take, in fuzz.test_timeouts, as its campaign
    allowed it (Oracle.timeout_scale: 3 for oracle=grad's forward and backward compiles)."""
    from nnfuzz.oracles.base import ORACLES, load_builtins

    load_builtins()
    return float(getattr(ORACLES.get(kind), "timeout_scale", 1.0))


def _store_of(folder: Path):
    """The lock of the campaign store holding ``folder`` (its campaign's reducer may be rewriting it); no lock
    for a folder outside a campaign's store (bugs/kept/, a copy)."""
    from nnfuzz.fuzz.runlog import LOG
    from nnfuzz.fuzz.store_lock import LOCK_FILE, store_lock

    store = folder.resolve().parent
    if (store / LOG).exists() or (store / LOCK_FILE).exists():
        return store_lock(store, "reduce")
    return contextlib.nullcontext()
