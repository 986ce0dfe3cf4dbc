"""`nnfuzz dedup bugs/`: group a bug store's folders by signature (one report per root cause).

Writes ``index.json`` (the groups and one row per folder) and ``README.md`` (a table: id, status,
system, symptom, op, nodes, blame, signature) into the store; bug folders are not changed. It holds the
store's lock meanwhile (fuzz/store_lock.py): refused while a campaign runs on the store.

``--recheck`` first replays every folder on the system it records and re-derives its root cause
(triage/recheck.py): meta.json takes today's localization and signature, so a store saved by an earlier
nnfuzz is signed by today's rules (a folder that no longer shows a bug is marked, not removed).
Prints one line per root cause (its first folder, how many folders share it, system, symptom, op and
the system's innermost message); ``--json`` prints a JSON summary instead.
"""
from __future__ import annotations

import sys

EXIT_CODES = {0: "done", 2: "the folder does not exist or holds no bug folders"}
USAGE = "usage: nnfuzz dedup <bug store, e.g. bugs/> [--recheck] [--json]"


def run(cfg, positional, overrides) -> int:
    from nnfuzz.commands.store_arg import one_store
    from nnfuzz.fuzz.store_lock import store_lock
    from nnfuzz.output import result
    from nnfuzz.triage.dedup import write_index

    flags = [a for a in positional if a.startswith("--")]
    unknown = [f for f in flags if f != "--recheck"]
    if unknown:
        print(f"nnfuzz dedup: unknown option {' '.join(unknown)}\n{USAGE}", file=sys.stderr)
        return 2
    root = one_store("dedup", [a for a in positional if not a.startswith("--")] + list(overrides), USAGE)
    if root is None:
        return 2
    with store_lock(root, "dedup"):  # refused while a campaign writes the store
        rechecked = _recheck(cfg, root) if flags else None
        index = write_index(root)
    if not index["bugs"] and not index["unreadable"]:
        print(f"nnfuzz dedup: {root} holds no bug folders (NNNN/)", file=sys.stderr)
        return 2
    for b in index["unreadable"]:
        print(f"nnfuzz dedup: {root / b['id']} is unreadable and left out: {b['error']}", file=sys.stderr)
    summary = {"bugs": index["bugs"], "unique": index["unique"], "unreadable": len(index["unreadable"]),
               "index": str(root / "index.json"), "readme": str(root / "README.md")}
    if rechecked is not None:
        summary["recheck"] = {k: sum(r["outcome"] == k for r in rechecked) for k in sorted({r["outcome"] for r in rechecked})}
    result(summary, lambda: _table(index))
    return 0


def _table(index: dict) -> None:
    """One line per root cause: its first folder, its count of folders, system, symptom, op, message."""
    from nnfuzz.output import plural


    rows = {r["id"]: r for r in index["rows"]}
    print(f"{plural(index['bugs'], 'bug folder')}, {plural(index['unique'], 'unique bug')} (root causes):")
    for g in index["groups"]:
        r = rows[g["folders"][0]]
        op = f" in {r['op']}" if r["op"] and r["op"] != "-" else ""
        print(f"  {r['id']} (x{len(g['folders'])})  {r['system']} {r['symptom']}{op}: {r['message'][:140]}")


def _recheck(cfg, root):
    from omegaconf import OmegaConf

    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.triage.recheck import recheck_store

    tolerances = {k: tuple(v) for k, v in OmegaConf.to_container(cfg.fuzz.tolerances).items()}

    def make_sandbox(system, options):
        return Sandbox(system, options or {}, test_timeout=float(cfg.fuzz.test_timeout),
                       memory_limit_mb=int(cfg.fuzz.memory_limit_mb))

    return recheck_store(root, tolerances, make_sandbox, note=lambda line: print(line, file=sys.stderr))
