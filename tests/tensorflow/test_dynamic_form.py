"""The ``tf`` dynamic form (docs/dynamic-shapes.md): a dynamic graph's TF function has ``None`` in its input
signature exactly on the family's symbolic axes (a static graph's is unchanged), and the form is kept only
where that function, traced once, computes TF eager's outputs at every shape. Traces TF functions in
graph mode (no XLA compile)."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from nnfuzz.abstract import AbsTensor, DType  # noqa: E402
from nnfuzz.gir import GraphIR, Inst, ShapeFamily  # noqa: E402
from nnfuzz.materialize.tensorflow.dynamic import tf_form  # noqa: E402
from nnfuzz.materialize.tensorflow.module import TFGraph  # noqa: E402
from nnfuzz.ops.binary.spec import Add  # noqa: E402
from nnfuzz.ops.elementwise.spec import Sigmoid  # noqa: E402
from nnfuzz.ops.layout.spec import Flatten  # noqa: E402

SHAPES = [{"n": 4}, {"n": 1}, {"n": 9}]


def add_sigmoid(family: bool) -> GraphIR:
    """sigmoid(a + b), a[n, 3] and b[n, 3]; with ``family``: n symbolic (4, 1, 9)."""
    t = AbsTensor([4, 3], DType.float32)
    g = GraphIR(vars={"a": t, "b": t, "v0": t, "v1": t}, inputs=["a", "b"],
                insts=[Inst(Add(), ["a", "b"], ["v0"]), Inst(Sigmoid(), ["v0"], ["v1"])], outputs=["v1"])
    if family:
        g.family = ShapeFamily({"a": ["n", None], "b": ["n", None]}, SHAPES)
    return g.check()


def flatten() -> GraphIR:
    """flatten(a[n, 3, 2], 1) -> [n, 6], n symbolic: TF's lowering reads every dim as an int."""
    g = GraphIR(vars={"a": AbsTensor([4, 3, 2], DType.float32), "v0": AbsTensor([4, 6], DType.float32)},
                inputs=["a"], insts=[Inst(Flatten(axis=1), ["a"], ["v0"])], outputs=["v0"])
    g.family = ShapeFamily({"a": ["n", None, None]}, SHAPES)
    return g.check()


def inputs(g: GraphIR):
    rng = np.random.default_rng(0)
    return [{i: rng.standard_normal(g.at(k).vars[i].shape).astype(np.float32) for i in g.inputs}
            for k in range(g.n_shapes)]


def test_the_signature_has_none_on_the_symbolic_axes_only():
    dyn = TFGraph(add_sigmoid(True), {}).input_signature
    assert [s.shape.as_list() for s in dyn] == [[None, 3], [None, 3]]
    assert [s.name for s in dyn] == ["a", "b"]
    static = TFGraph(add_sigmoid(False), {}).input_signature
    assert [s.shape.as_list() for s in static] == [[4, 3], [4, 3]]


def test_a_shape_independent_function_is_the_dynamic_form():
    g = add_sigmoid(True)
    assert tf_form(g, {}, inputs(g)) == "dynamic"


def test_a_lowering_that_reads_a_symbolic_dim_keeps_the_form_static():
    g = flatten()
    why = tf_form(g, {}, inputs(g))
    assert why.startswith("the TF function with None dims does not trace: TypeError"), why
