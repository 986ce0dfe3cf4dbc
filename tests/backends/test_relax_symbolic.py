"""Relax-native models with symbolic shape vars (materialize/relax/symbolic.py, docs/dynamic-shapes.md): a
dynamic graph's ``main`` takes ``R.Tensor((n, m))`` inputs sharing one ``tirx.Var`` per family symbol, a
function cut out of ``main`` takes its own symbols (a dim that is an expression, ``n * 2``, is one), and a
graph whose lowering asks a symbolic dim keeps its ``relax`` form static. Builds modules, compiles none."""
import gc

import pytest

pytest.importorskip("tvm")

from nnfuzz.abstract import AbsTensor, DType  # noqa: E402
from nnfuzz.gir import GraphIR, Inst, ShapeFamily  # noqa: E402
from nnfuzz.materialize.relax.build import build_relax  # noqa: E402
from nnfuzz.materialize.relax.form import relax_form  # noqa: E402
from nnfuzz.ops.binary.spec import Add  # noqa: E402
from nnfuzz.ops.combine.spec import Concat  # noqa: E402
from nnfuzz.ops.elementwise.spec import Sigmoid  # noqa: E402
from nnfuzz.ops.layout.spec import Flatten  # noqa: E402

SHAPES = [{"n": 4, "m": 3}, {"n": 1, "m": 1}, {"n": 9, "m": 5}]
FLAT, CHAIN = 0, 1  # layout seeds of a two-instruction graph (build.draw_layout)


def graph(first, out_shape) -> GraphIR:
    """sigmoid(first(a, b)) over a[n, m] and b[n, m]."""
    t = AbsTensor([4, 3], DType.float32)
    o = AbsTensor(out_shape, DType.float32)
    g = GraphIR(vars={"a": t, "b": t, "v0": o, "v1": o}, inputs=["a", "b"],
                insts=[Inst(first, ["a", "b"], ["v0"]), Inst(Sigmoid(), ["v0"], ["v1"])], outputs=["v1"])
    g.family = ShapeFamily({"a": ["n", "m"], "b": ["n", "m"]}, SHAPES)
    return g.check()


def signature(mod, fn: str) -> list:
    return [str(p.ty) for p in mod[fn].params]


def test_main_takes_the_family_symbols_shared_by_the_inputs():
    mod, layout = build_relax(graph(Add(), [4, 3]), FLAT)
    assert layout.kind == "flat"
    assert signature(mod, "main") == ['R.Tensor((n, m), dtype="float32")'] * 2
    assert relax_form(graph(Add(), [4, 3]), FLAT) == "dynamic"


def test_a_static_graph_keeps_its_sizes():
    g = graph(Add(), [4, 3])
    g.family = None
    assert signature(build_relax(g, FLAT)[0], "main") == ['R.Tensor((4, 3), dtype="float32")'] * 2


def test_a_cut_out_function_takes_an_expression_dim_as_its_own_symbol():
    g = graph(Concat(0, arity=2), [8, 3])
    mod, layout = build_relax(g, CHAIN)
    assert layout.kind == "chain" and relax_form(g, CHAIN) == "dynamic"
    assert signature(mod, "sub1") == ['R.Tensor((d0, m), dtype="float32")']  # v0: (n + n, m) in main
    # Relax binds d0 to main's n * 2 at the call: main's result keeps the expression
    assert '-> R.Tensor(("n * 2", m), dtype="float32"):\n        cls = Module' in mod.script()


def test_a_lowering_that_asks_a_symbolic_dim_keeps_the_form_static(capfd):
    g = GraphIR(vars={"a": AbsTensor([4, 3, 2], DType.float32), "v0": AbsTensor([4, 6], DType.float32)},
                inputs=["a"], insts=[Inst(Flatten(axis=1), ["a"], ["v0"])], outputs=["v0"])
    g.family = ShapeFamily({"a": ["n", None, None]}, [{"n": 4}, {"n": 1}, {"n": 9}])
    why = relax_form(g.check(), FLAT)
    assert why.startswith("the Relax module with symbolic dims does not build: OpDefinitionError"), why
    gc.collect()  # the failed build's BlockBuilder is gone, its blocks closed: no TVM warning per such graph
    assert "remaining blocks" not in capfd.readouterr().err


def test_symbols_equal_at_every_shape_are_one_var():
    """a[n, m] + b[k, m] where k == n at every shape: one Var, so Relax knows the sum's shape."""
    g = graph(Add(), [4, 3])
    g.family = ShapeFamily({"a": ["n", "m"], "b": ["k", "m"]}, [{**a, "k": a["n"]} for a in SHAPES])
    mod, _ = build_relax(g.check(), FLAT)
    assert signature(mod, "main") == ['R.Tensor((k, m), dtype="float32")'] * 2
    assert relax_form(g, FLAT) == "dynamic"
