"""`nnfuzz stats DIR [DIR2] [--from=auto|gir|onnx] [--json]`: Isra's diversity metrics and HirGen's
coverage of one corpus of models, or two side by side (docs/stats.md defines each metric).

Models are read from each folder's gir.json where present (nnfuzz's own graphs: metrics over nnfuzz op
types, relative to the registered ops), else from model.onnx (metrics over ONNX op types, relative to the
op types seen in the corpora compared); ``--from`` forces one reader so corpora of different tools compare.
A table on stdout, or with ``--json`` one JSON document.
"""
from __future__ import annotations

import sys
from pathlib import Path

EXIT_CODES = {0: "done", 2: "bad arguments, or a folder without a readable model"}

ROWS = [("graphs", "graphs"), ("NOO", "NOO  operations per graph"), ("NOT", "NOT  op types per graph"),
        ("NOP", "NOP  op pairs per graph"), ("NTR", "NTR  op triples per graph"),
        ("NSA", "NSA  shape/attribute settings per graph"), ("OTC", "OTC  op type coverage"),
        ("IDC", "IDC  input degree coverage"), ("ODC", "ODC  output degrees per op"),
        ("SEC", "SEC  single edge coverage"), ("DEC", "DEC  double edge coverage"),
        ("SAC", "SAC  shape/attribute settings per op"), ("op_types", "op types"),
        ("op_x_dtype", "op x dtype"), ("op_x_dtype_share", "op x dtype (share of rows)"),
        ("op_x_rank_x_attr_bin", "op x rank x attribute bin"), ("edges", "edges (op pairs)"),
        ("triples", "triples")]
SHARES = {"OTC", "IDC", "SEC", "DEC", "op_x_dtype_share"}


def _fmt(key, v) -> str:
    if v is None:
        return "-"
    if key in SHARES:
        return f"{100 * v:.3g} %"
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def _usage(msg: str) -> int:
    print(f"nnfuzz stats: {msg}\nusage: nnfuzz stats DIR [DIR2] [--from=auto|gir|onnx] [--json]", file=sys.stderr)
    return 2


def run(cfg, positional, overrides) -> int:
    from nnfuzz.output import result
    from nnfuzz.stats.corpus import CorpusError, load_corpus
    from nnfuzz.stats.metrics import compute, corpus_for

    flags = [a for a in positional if a.startswith("--")]
    dirs = [Path(a) for a in positional if not a.startswith("--")]
    prefer = "auto"
    for f in flags:
        if f.startswith("--from=") and f.split("=", 1)[1] in ("auto", "gir", "onnx"):
            prefer = f.split("=", 1)[1]
        else:
            return _usage(f"unknown option {f!r}")
    if overrides or not 1 <= len(dirs) <= 2:
        given = [str(d) for d in dirs] + list(overrides)
        return _usage(f"expected one or two folders of models, got {len(given)}: {' '.join(given)}" if given
                      else "which folder? name one or two folders of models, e.g. models/")
    try:
        loaded = [load_corpus(d, prefer) for d in dirs]
    except CorpusError as e:
        print(f"nnfuzz stats: {e}", file=sys.stderr)
        return 2
    graphs = [g for g, _ in loaded]
    try:
        corpus = corpus_for(graphs)
    except CorpusError as e:
        print(f"nnfuzz stats: {e}", file=sys.stderr)
        return 2
    results = [compute(gs, corpus) for gs in graphs]
    for d, (_, skipped) in zip(dirs, loaded):
        for s in skipped:
            print(f"nnfuzz stats: {d}: left out: {s}", file=sys.stderr)
    result({"op_corpus": corpus.name, "n_C": len(corpus.ops),
            "corpora": [{"path": str(d), "unreadable": len(s), "metrics": r}
                        for d, (_, s), r in zip(dirs, loaded, results)]},
           lambda: _table(dirs, results, corpus))
    return 0


def _table(dirs, results, corpus) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"corpus statistics, relative to {corpus.name} (n_C = {len(corpus.ops)})")
    table.add_column("metric")
    for d in dirs:
        table.add_column(str(d), justify="right")
    for key, label in ROWS:
        table.add_row(label, *[_fmt(key, r[key]) for r in results])
    Console().print(table)
    for d, r in zip(dirs, results):
        if r["outside_corpus"]:
            print(f"{d}: op types outside the op corpus (not counted): {', '.join(r['outside_corpus'][:20])}")
