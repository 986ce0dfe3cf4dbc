"""`nnfuzz report bugs/ [-o FILE]`: one static HTML page of a bug store: the campaign over time
(from campaign.jsonl), a table of its unique bugs (grouped as `nnfuzz dedup` groups them), and a section
per bug with its graph drawn, the error, the repro command and the standalone script (docs/report.md).
The page goes to ``<store>/report.html`` unless ``-o FILE`` names another file.

The page needs no server and loads nothing (inline CSS, JS and SVG). Folders or log lines that cannot be
read are listed in the page (and here on stderr) and left out. One line on stdout says what was
written, or with ``--json`` one JSON document.
"""
from __future__ import annotations

import sys
from pathlib import Path

EXIT_CODES = {0: "written", 2: "bad arguments, or the folder does not exist or holds neither bug folders nor a "
                              "campaign.jsonl"}
USAGE = "usage: nnfuzz report <bug store, e.g. bugs/> [-o FILE (default: <store>/report.html)] [--no-stats] [--json]"


def run(cfg, positional, overrides) -> int:
    from nnfuzz.commands.store_arg import one_store
    from nnfuzz.output import plural, result
    from nnfuzz.report.page import render
    from nnfuzz.report.store import LOG, gather
    from nnfuzz.triage.folder import atomic_write_text

    args, paths, out, stats = list(positional), [], None, True
    while args:
        a = args.pop(0)
        if a in ("-o", "--out"):
            if not args:
                print(f"nnfuzz report: {a} needs a file name\n{USAGE}", file=sys.stderr)
                return 2
            out = Path(args.pop(0))
        elif a.startswith("--out="):
            out = Path(a.split("=", 1)[1])
        elif a == "--no-stats":
            stats = False
        elif a.startswith("-"):
            print(f"nnfuzz report: unknown option {a!r}\n{USAGE}", file=sys.stderr)
            return 2
        else:
            paths.append(a)
    root = one_store("report", paths + list(overrides), USAGE)
    if root is None:
        return 2
    data = gather(root, with_stats=stats)
    if not data.bugs and not data.has_log and not data.skipped:
        print(f"nnfuzz report: {root} holds no bug folders (NNNN/) and no {LOG}", file=sys.stderr)
        return 2
    for s in data.skipped:
        print(f"nnfuzz report: skipped {s.what}: {s.error}", file=sys.stderr)
    out = out or root / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, render(data))
    out.chmod(0o644)  # a page to share (the temporary file it was written through is private)
    doc = {"out": str(out), "unique": len(data.unique), "folders": len(data.bugs), "campaigns": len(data.campaigns),
           "skipped": len(data.skipped)}
    result(doc, lambda: print(f"wrote {out}: {plural(doc['unique'], 'unique bug')} of "
                              f"{plural(doc['folders'], 'folder')}, {plural(doc['campaigns'], 'campaign')}, "
                              f"{plural(doc['skipped'], 'entry', 'entries')} skipped"))
    return 0
