import collections

import pytest

from nnfuzz.abstract import OP_REGISTRY, load_builtin_ops
from nnfuzz.errors import ConfigError, OpDefinitionError
from nnfuzz.generate import GenPolicy, generate_graph
from nnfuzz.generate.opset import select_ops
from nnfuzz.generate.symbolic import GraphGenerator


def test_same_seed_same_graph_bit_for_bit():
    p = GenPolicy(max_nodes=12)
    ops = select_ops(p)
    for seed in range(5):
        a = GraphGenerator(GenPolicy(max_nodes=12, seed=seed), ops).generate().dumps()
        b = GraphGenerator(GenPolicy(max_nodes=12, seed=seed), ops).generate().dumps()
        assert a == b
    assert generate_graph(p, seed=1).dumps() != generate_graph(p, seed=2).dumps()


def test_graphs_are_well_formed_and_bounded():
    p = GenPolicy(max_nodes=10, max_elems=2048, max_rank=4)
    sizes, stats = [], collections.Counter()
    for seed in range(40):
        gen = GraphGenerator(GenPolicy(**{**p.to_dict(), "seed": seed}), select_ops(p))
        g = gen.generate().check()  # the full check (types too: generate() checks the structure only)
        stats.update(gen.stats)
        sizes.append(g.n_nodes)
        for t in g.vars.values():
            assert t.ndims <= 4 and t.nelement() <= 2048 and all(d >= 1 for d in t.shape)
        assert g.inputs, "every graph has at least one model input"
    assert sum(s == 10 for s in sizes) >= 36, sizes  # nearly every graph reaches max_nodes
    assert stats["backward"] > 0 and stats["forward"] > 0, stats


def test_include_exclude_filter_and_unknown_names_fail():
    ops = select_ops(GenPolicy(include=["elementwise"], exclude=["Relu"]))
    assert ops and all(c.family == "elementwise" for c in ops) and "Relu" not in {c.name for c in ops}
    with pytest.raises(ConfigError, match="Reluu"):
        select_ops(GenPolicy(include=["Reluu"]))
    with pytest.raises(ConfigError, match="no_such_module"):
        select_ops(GenPolicy(include_modules=["no_such_module"]))


def test_unsatisfiable_user_op_is_named(tmp_path, monkeypatch):
    (tmp_path / "bad_ops_mod.py").write_text(
        "from nnfuzz.abstract import AbsOpBase, AbsTensor, DType\n"
        "class NeverFits(AbsOpBase):\n"
        "    in_dtypes = [(DType.float32,)]\n"
        "    out_dtypes = [(DType.float32,)]\n"
        "    def __init__(self, k):\n"
        "        self.k = k\n"
        "    def requires(self, inputs):\n"
        "        return [self.k >= 5, self.k <= 2]\n"
        "    def type_transfer(self, inputs):\n"
        "        return [AbsTensor(inputs[0].shape, DType.float32)]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(OpDefinitionError, match="NeverFits.*no valid instance"):
            select_ops(GenPolicy(include_modules=["bad_ops_mod"]))
    finally:
        OP_REGISTRY.pop("NeverFits", None)


def _attr_values(binning: bool, seeds=range(60)):
    """Distinct (op, attribute, value) triples over graphs of attribute-heavy families."""
    load_builtin_ops()
    fams = [f for f in ("conv", "pool", "pad", "resize", "layout") if any(c.family == f for c in OP_REGISTRY.values())]
    p = GenPolicy(max_nodes=8, binning=binning, include=fams, dtypes=["float32"])
    ops = select_ops(p)
    seen = set()
    for s in seeds:
        g = GraphGenerator(GenPolicy(**{**p.to_dict(), "seed": s}), ops).generate()
        for inst in g.insts:
            for k, v in inst.op.attrs.items():
                for x in (v if isinstance(v, (list, tuple)) else [v]):
                    if isinstance(x, int):
                        seen.add((inst.op.name, k, x))
    return seen


def test_binning_yields_clearly_more_distinct_values():
    binned, unbinned = len(_attr_values(True)), len(_attr_values(False))
    assert binned > 1.4 * unbinned, (binned, unbinned)
