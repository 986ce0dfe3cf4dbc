"""`nnfuzz dedup bugs/`: group a bug store's folders by signature (one report per root cause).

Writes ``index.json`` (the groups and one row per folder) and ``README.md`` (a table: id, status,
system, symptom, op, nodes, blame, signature) into the store; bug folders are not changed.
Prints a JSON summary. Exit codes: 0 done; 2 the folder does not exist or holds no bug folders.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def run(cfg, positional, overrides) -> int:
    from nnfuzz.triage.dedup import write_index

    paths = [a for a in positional if not a.startswith("--")]
    if len(paths) != 1 or len(paths) != len(positional) or overrides:
        print(f"usage: nnfuzz dedup <bug store, e.g. bugs/>; got {positional + list(overrides)}", file=sys.stderr)
        return 2
    root = Path(paths[0])
    if not root.is_dir():
        print(f"nnfuzz dedup: {root} is not a folder; pass a bug store such as bugs/", file=sys.stderr)
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
