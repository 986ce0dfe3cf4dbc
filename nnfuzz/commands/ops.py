"""`nnfuzz ops`: the registered operators, their families, dtypes and ranks, and which frameworks can
build them (the TF-only dialect ops included, marked as such)."""
from __future__ import annotations


def _ranks(rs) -> str:
    return " ".join("{" + ",".join(map(str, r)) + "}" if len(r) < 6 else "any" for r in rs)


def run(cfg) -> int:
    from rich.console import Console
    from rich.table import Table

    from nnfuzz.config import gen_policy
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.materialize.tensorflow.lowering import has_tf_lowering
    from nnfuzz.materialize.torch.lowering import has_torch_lowering

    ops = select_ops(gen_policy(cfg), dialects=("tf",))
    table = Table(title=f"{len(ops)} operators")
    for col in ("name", "family", "in dtypes -> out", "input ranks", "attributes", "torch", "tf"):
        table.add_column(col)
    for cls in sorted(ops, key=lambda c: (c.family, c.name)):
        rows = sorted({" ".join(d.short for d in i) + "->" + " ".join(d.short for d in o)
                       for i, o in zip(cls.in_dtypes, cls.out_dtypes)})
        attrs = list(cls._sym_params) + ([f"*{cls._var_param}"] if cls._var_param else []) + \
            [f"{k}∈{list(cls.attr_choices[k])}" for k in cls._kw_params]
        table.add_row(cls.name, cls.family, ", ".join(rows), _ranks(cls.inp_ranks), " ".join(attrs),
                      "yes" if has_torch_lowering(cls) else "no",
                      ("only" if cls.dialect == "tf" else "yes") if has_tf_lowering(cls) else "no")
    Console(width=200).print(table)
    return 0
