"""`nnfuzz dedup bugs/`: group a bug store's folders by signature (one report per root cause).

Writes ``index.json`` (the groups and one row per folder) and ``README.md`` (a table: id, status,
system, symptom, op, nodes, blame, signature) into the store; bug folders are not changed.
Prints a JSON summary. Exit codes: 0 done; 2 the folder does not exist or holds no bug folders.
"""
from __future__ import annotations

import json
import sys


def run(cfg, positional, overrides) -> int:
    from nnfuzz.commands.store_arg import one_store
    from nnfuzz.triage.dedup import write_index

    root = one_store("dedup", list(positional) + list(overrides), "usage: nnfuzz dedup <bug store, e.g. bugs/>")
    if root is None:
        return 2
    index = write_index(root)
    if not index["bugs"] and not index["unreadable"]:
        print(f"nnfuzz dedup: {root} holds no bug folders (NNNN/)", file=sys.stderr)
        return 2
    for b in index["unreadable"]:
        print(f"nnfuzz dedup: {root / b['id']} is unreadable and left out: {b['error']}", file=sys.stderr)
    print(json.dumps({"bugs": index["bugs"], "unique": index["unique"], "unreadable": len(index["unreadable"]),
                      "index": str(root / "index.json"), "readme": str(root / "README.md")}))
    return 0
