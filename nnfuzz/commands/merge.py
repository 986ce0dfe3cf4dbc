"""`nnfuzz merge A B [...] -o C`: merge bug stores (renumbered, re-deduplicated; sources unchanged).

The output store is locked meanwhile (fuzz/store_lock.py): refused while a campaign writes it. Prints one
line (merged, duplicates, unique in the merged store, unreadable folders left out), or with
``--json`` the same as one JSON document.
"""
from __future__ import annotations

import sys
from pathlib import Path

EXIT_CODES = {0: "merged", 2: "bad arguments, a source that is not a folder, or no readable bug at all"}


def _usage(msg: str) -> int:
    print(f"nnfuzz merge: {msg}\nusage: nnfuzz merge STORE [STORE ...] -o OUT [--json]", file=sys.stderr)
    return 2


def run(cfg, positional, overrides) -> int:
    from nnfuzz.fuzz.store_lock import store_lock
    from nnfuzz.output import plural, result
    from nnfuzz.triage.merge import merge_stores

    args, out = list(positional), None
    if "-o" in args:
        i = args.index("-o")
        if i + 1 >= len(args):
            return _usage("-o needs a folder")
        out = Path(args[i + 1])
        del args[i:i + 2]
    if out is None or overrides or not args or any(a.startswith("-") for a in args):
        given = positional + list(overrides)
        return _usage(f"expected bug stores and -o OUT, got: {' '.join(given)}" if given else
                      "which stores? name them and the output, e.g. nnfuzz merge a/bugs b/bugs -o merged")
    sources = [Path(a) for a in args]
    for s in sources:
        if not s.is_dir():
            return _usage(f"{s} is not a folder; pass bug stores such as bugs/")
        if s.resolve() == out.resolve():
            return _usage(f"{s} is also the output; merge into a new folder or list only the other stores")
    with store_lock(out, "merge"):  # the output store: refused while a campaign writes it
        summary = merge_stores(sources, out, progress=lambda note: print(f"[merge] {note}", file=sys.stderr))
    for s in summary["unreadable"]:
        print(f"nnfuzz merge: left out (unreadable): {s}", file=sys.stderr)
    for s in summary["links_not_followed"]:
        print(f"nnfuzz merge: symbolic link not copied: {s}", file=sys.stderr)
    doc = {k: v for k, v in summary.items() if k != "folders"}
    result(doc, lambda: print(f"merged {plural(doc['merged'], 'bug folder')} into {out}: "
                              f"{plural(doc['duplicates'], 'duplicate')}, "
                              f"{plural(doc['unique_in_store'], 'unique bug')} in the store"
                              + (f", {len(doc['unreadable'])} unreadable left out" if doc["unreadable"] else "")))
    if not summary["merged"]:
        print("nnfuzz merge: no readable bug folder (NNNN/) in the sources", file=sys.stderr)
        return 2
    return 0
