"""`nnfuzz ops`: the registered operators, their families, dtypes and ranks, and which frameworks can
build them (the TF-only dialect ops included, marked as such).

On a terminal a table; piped, one tab-separated line per operator under a header line (for grep, cut,
awk); with ``--json`` one JSON document. What a framework prints on stderr while it loads is held back
(``debug=true`` shows it)."""
from __future__ import annotations

import sys

EXIT_CODES = {0: "listed", 2: "a configuration error (mgen.include_modules that cannot be imported, ...)"}
COLUMNS = ("name", "family", "in dtypes -> out", "input ranks", "attributes", "torch", "tf")


def _ranks(rs) -> str:
    return " ".join("{" + ",".join(map(str, r)) + "}" if len(r) < 6 else "any" for r in rs)


def op_rows(cfg) -> list:
    """One dict per operator (``COLUMNS`` as keys), sorted by family and name."""
    from nnfuzz.config import gen_policy
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.materialize.tensorflow.lowering import has_tf_lowering
    from nnfuzz.materialize.torch.lowering import has_torch_lowering

    rows = []
    for cls in sorted(select_ops(gen_policy(cfg), dialects=("tf",)), key=lambda c: (c.family, c.name)):
        dtypes = sorted({" ".join(d.short for d in i) + "->" + " ".join(d.short for d in o)
                         for i, o in zip(cls.in_dtypes, cls.out_dtypes)})
        attrs = list(cls._sym_params) + ([f"*{cls._var_param}"] if cls._var_param else []) + \
            [f"{k}∈{list(cls.attr_choices[k])}" for k in cls._kw_params]
        rows.append(dict(zip(COLUMNS, (
            cls.name, cls.family, ", ".join(dtypes), _ranks(cls.inp_ranks), " ".join(attrs),
            "yes" if has_torch_lowering(cls) else "no",
            ("only" if cls.dialect == "tf" else "yes") if has_tf_lowering(cls) else "no"))))
    return rows


def run(cfg) -> int:
    from nnfuzz.output import quiet, result, say

    held = []
    with quiet(held.append):
        rows = op_rows(cfg)
    if cfg.debug:
        for text in held:
            say(f"what the frameworks printed while loading:\n{text.rstrip()}")
    result({"ops": rows}, lambda: _table(rows) if sys.stdout.isatty() else _lines(rows))
    return 0


def _table(rows) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(rows)} operators")
    for col in COLUMNS:
        table.add_column(col)
    for r in rows:
        table.add_row(*(r[c] for c in COLUMNS))
    Console().print(table)


def _lines(rows) -> None:
    print("\t".join(COLUMNS))
    for r in rows:
        print("\t".join(r[c] for c in COLUMNS))
