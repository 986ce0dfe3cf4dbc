"""Dynamic shapes, part one: a static graph lifted to a family of shapes (nnfuzz/generate/dynamic.py) and
the family in GraphIR (gir.py ShapeFamily, GraphIR.at, JSON)."""
import json
import random

import pytest

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.errors import InternalError
from nnfuzz.generate import GenPolicy, generate_graph
from nnfuzz.generate.dynamic import LARGEST, MIN_SHAPES, broadcast_ones, lift, shapeless_broadcasts
from nnfuzz.gir import GraphIR, Inst, ShapeFamily
from nnfuzz.ops.binary.spec import Add
from nnfuzz.ops.elementwise.spec import Relu
from nnfuzz.ops.layout.spec import Reshape
from tests.graphs import chain


def _add(a_shape, b_shape, weight=False) -> GraphIR:
    g = GraphIR(vars={"a": AbsTensor(list(a_shape), DType.float32), "b": AbsTensor(list(b_shape), DType.float32)})
    g.inputs, g.weights = (["a"], ["b"]) if weight else (["a", "b"], [])
    g.vars["y"] = Add().checked_type_transfer([g.vars["a"], g.vars["b"]])[0]
    g.insts, g.outputs = [Inst(Add(), ["a", "b"], ["y"])], ["y"]
    return g.check()


def test_a_chain_gets_at_least_three_shapes_with_the_edge_values():
    g = chain(Relu(), shape=(6, 5))
    got = lift(g, 4096, random.Random(1))
    assert got is not None and got.n_shapes >= MIN_SHAPES
    fam = got.family
    assert fam.assignments[0] == {s: g.vars["x"].shape[a] for a, s in enumerate(fam.dims["x"]) if s}
    assert len({tuple(sorted(a.items())) for a in fam.assignments}) == len(fam.assignments)  # distinct
    assert dict.fromkeys(fam.symbols(), 1) in fam.assignments
    assert any(LARGEST in a.values() for a in fam.assignments)
    for k in range(got.n_shapes):
        at = got.at(k)
        assert at.family is None and at.vars["v0"].shape == at.vars["x"].shape
        assert at.vars["x"].shape == fam.input_shape(g.vars["x"].shape, "x", k)


def test_broadcasting_inputs_keep_their_dims_equal_at_every_shape():
    g = _add((4, 3), (4, 3))
    shared = 0
    for seed in range(10):
        got = lift(g, 4096, random.Random(seed))
        if got is None:  # (a symbol facing a static 4 of the other input can only be 1 or 4: two shapes)
            continue
        dims = got.family.dims
        shared += bool(set(dims.get("a", ())) & set(dims.get("b", ())) - {None})
        for k in range(got.n_shapes):
            a, b = got.at(k).vars["a"].shape, got.at(k).vars["b"].shape
            assert all(x == y or 1 in (x, y) for x, y in zip(a, b)), (a, b)
    assert shared >= 3  # one symbol across both inputs


def test_a_dim_the_rules_pin_stays_static():
    """A weight is static: the input dim it must equal is pinned; a Reshape's constant target pins all."""
    got = lift(_add((4, 3), (4, 3), weight=True), 4096, random.Random(0))
    assert got is None
    assert lift(chain(Reshape(12), shape=(4, 3)), 4096, random.Random(0)) is None


def test_the_element_budget_holds_at_every_shape():
    g = chain(Relu(), shape=(8, 8))
    for seed in range(5):
        got = lift(g, 300, random.Random(seed))
        assert got is not None
        assert all(got.at(k).vars["x"].shape[0] * got.at(k).vars["x"].shape[1] <= 300 for k in range(got.n_shapes))


def test_generated_graphs_lift_and_round_trip_through_json():
    pol = GenPolicy(seed=0)
    lifted = 0
    for seed in range(15):
        g = generate_graph(pol, seed=seed)
        got = lift(g, pol.max_elems, random.Random(seed))
        if got is None:
            continue
        lifted += 1
        back = GraphIR.loads(got.dumps())
        assert back.family == got.family and back.dumps() == got.dumps()
        for k in range(got.n_shapes):
            back.at(k)  # checked: every op's rules hold
    assert lifted >= 5


def test_a_static_graph_is_written_as_before():
    g = chain(Relu())
    assert "family" not in g.to_json() and g.at(0) is g
    with pytest.raises(InternalError):
        g.at(1)


def test_a_family_missing_a_symbol_is_refused_with_the_fix():
    g = lift(chain(Relu(), shape=(6, 5)), 4096, random.Random(1))
    data = json.loads(g.dumps())
    data["family"]["assignments"][1] = {}
    with pytest.raises(ValueError, match="expected every symbol"):
        GraphIR.from_json(data)
    assert ShapeFamily.from_json(json.loads(g.dumps())["family"]) == g.family


def test_systems_refusing_a_symbolic_form_in_their_own_words_are_known_limitations():
    from nnfuzz.backends.known import classify

    assert classify("tvm", "ValueError: Cannot broadcast symbolic dimension s2 with non-1 constant 14: runtime "
                           "value of symbolic dimension is unknown at compile time.") is not None
    assert classify("tvm", "ValueError: Cannot broadcast symbolic dimensions s0 and s2 - both are symbolic but "
                           "structurally different.") is not None
    # a dim that is an expression (a Slice's length; a tvm-cpu soak's 0109 and 0134) ...
    assert classify("tvm", "ValueError: Cannot broadcast symbolic dimension (T.min(T.int64(3), s0) + T.int64(1) - "
                           "T.min(T.int64(2), s0)) // T.int64(2) with non-1 constant 2: runtime value") is not None
    assert classify("tvm", "ValueError: Cannot broadcast symbolic dimensions (T.min(T.int64(2), s0) + T.int64(94) - "
                           "T.min(T.max(s0 + T.int64(-9223372036854775808), T.int64(0)), s0)) // T.int64(95) and s0 "
                           "- both are symbolic but structurally different.") is not None
    assert classify("tvm", "ValueError: Squeeze axis 3 has a symbolic extent that cannot be proven to be 1 at import "
                           "time; only statically known unit-size axes can be squeezed.") is not None
    # ... but not TVM's own length of a whole-axis Slice, which is s0 itself: TVM's fault (0107, 0118, 0144)
    for a, b in (("s0", "T.min(T.int64(9223372036854775807), s0)"), ("T.min(T.int64(9223372036854775807), s4)", "s4")):
        assert classify("tvm", f"ValueError: Cannot broadcast symbolic dimensions {a} and {b} - both are symbolic "
                               "but structurally different. ONNX frontend requires dimensions names to match") is None
    assert classify("inductor", "LoweringException: GuardOnDataDependentSymNode: Could not extract specialized "
                                "integer from data-dependent expression u0 (unhinted: u0).") is not None
    assert classify("tvm", "InternalError: CodeGenVM cannot emit this Relax operator directly.") is None
    # torch's run-time check of a size relation it assumed for an unbacked size (the inductor-cpu campaign's
    # Slice of length 1 broadcast against u0); a relation of backed sizes stays a bug to look at
    assert classify("inductor", "RuntimeError: Eq(((Max(0, -Min(3, u0) + Min(7, u0)) + 88)//89), u0)") is not None
    assert classify("inductor", "RuntimeError: Eq(s0, 3)") is None
    # nnfuzz's own constants made from a symbolic size are no limitation of torch's (tests/torch/test_dynamic_gir_form.py)
    assert classify("inductor", "Unsupported: assume_constant_result argument conversion failed") is None



def _family(g: GraphIR, dims, assignments) -> GraphIR:
    g.family = ShapeFamily(dims, assignments)
    return g


def test_broadcast_ones_names_a_symbol_stretched_from_1_at_some_shape():
    """The H100 campaigns' case (a one-Fmod model): a[1, s0, s1] against b[12, s1], s0 1 at shapes 0-2 and
    12 at shape 3; torch's mark_unbacked reports a size as never 1, so s0 must not be marked unbacked."""
    g = _family(_add([1, 1, 11], [12, 11]), {"a": [None, "s0", "s1"], "b": [None, "s1"]},
                [{"s0": 1, "s1": 11}, {"s0": 1, "s1": 1}, {"s0": 1, "s1": 128}, {"s0": 12, "s1": 65}])
    assert broadcast_ones(g) == {"s0"}
    # stretched at a later shape only (shape 0 has the partner's size): named too
    later = _family(_add([12, 11], [12, 11]), {"a": ["s0", None], "b": [None, None]},
                    [{"s0": 12}, {"s0": 1}, {"s0": 12}])
    assert broadcast_ones(later) == {"s0"}
    # a symbol that is 1 where it meets a 1, or that both inputs share: nothing is stretched
    ones = _family(_add([4, 1], [4, 1]), {"a": ["s0", "s1"], "b": ["s0", None]},
                   [{"s0": 4, "s1": 1}, {"s0": 1, "s1": 1}, {"s0": 9, "s1": 1}])
    assert broadcast_ones(ones) == set()
    assert broadcast_ones(_add([4, 3], [4, 3])) == set()  # a static graph


def test_shapeless_broadcasts_name_a_symbol_against_a_constant_or_another_symbol():
    """Regression (tvm-cpu campaign 27, fuzz.dynamic=auto: 19 signatures, 34 folders, one root cause): Relax
    gives `R.add(x[s2], y[6])` and `R.add(x[s2], y[s3])` no shape, and TVM fails on whatever reads it
    (docs/dynamic-findings-tvm.md, "B"). A symbol against 1, or against itself, is shaped."""
    const = _family(_add([1, 6], [6], weight=True), {"a": [None, "s0"]}, [{"s0": 6}, {"s0": 1}, {"s0": 6}])
    assert shapeless_broadcasts(const) == ["Add: s0 vs 6"]
    other = _family(_add([5], [5]), {"a": ["s0"], "b": ["s1"]}, [{"s0": 5, "s1": 5}, {"s0": 1, "s1": 1},
                                                                  {"s0": 9, "s1": 9}])
    assert shapeless_broadcasts(other) == ["Add: s0 vs s1", "Add: s1 vs s0"]
    same = _family(_add([4, 3], [4, 1]), {"a": ["s0", "s1"], "b": ["s0", None]},
                   [{"s0": 4, "s1": 3}, {"s0": 1, "s1": 1}, {"s0": 9, "s1": 2}])
    assert shapeless_broadcasts(same) == []
    assert shapeless_broadcasts(_add([4, 3], [4, 3])) == []  # a static graph


def _one(op, shapes, dims, assignments) -> GraphIR:
    names = [f"i{k}" for k in range(len(shapes))]
    g = GraphIR(vars={n: AbsTensor(list(s), DType.float32) for n, s in zip(names, shapes)})
    g.inputs = names
    g.vars["y"] = op.checked_type_transfer([g.vars[n] for n in names])[0]
    g.insts, g.outputs = [Inst(op, names, ["y"])], ["y"]
    return _family(g.check(), dims, assignments)


def test_shapeless_broadcasts_cover_concat_gemm_and_channel_norms():
    """Regression (a tvm-cpu soak: B folders 0029, 0040, 0074, 0094, 0132): Concat's other axes, Gemm's C
    against the product and a channel norm's scale against the channels are shaped together too; two
    symbols equal at every shape but named apart leave Relax's result without a shape."""
    from nnfuzz.ops.combine.spec import Concat
    from nnfuzz.ops.linear.spec import Gemm
    from nnfuzz.ops.norm.spec import InstanceNorm

    shapes3 = [{"s0": 4, "s1": 4}, {"s0": 1, "s1": 1}, {"s0": 7, "s1": 7}]
    cat = _one(Concat(1, arity=2), [[4, 2], [4, 3]], {"i0": ["s0", None], "i1": ["s1", None]}, shapes3)
    assert shapeless_broadcasts(cat) == ["Concat: s0 vs s1", "Concat: s1 vs s0"]
    along = _one(Concat(0, arity=2), [[4, 2], [4, 2]], {"i0": ["s0", None], "i1": ["s1", None]}, shapes3)
    assert shapeless_broadcasts(along) == []  # the joined axis need not agree
    gemm = _one(Gemm(alpha=1.0, beta=1.0, trans_a=False, trans_b=False), [[3, 5], [5, 4], [4]],
                {"i1": [None, "s0"], "i2": ["s1"]}, shapes3)
    assert shapeless_broadcasts(gemm) == ["Gemm: s0 vs s1", "Gemm: s1 vs s0"]
    norm = _one(InstanceNorm(eps=0.125), [[2, 4, 3], [4], [4]], {"i0": [None, "s0", None], "i1": ["s1"],
                                                                 "i2": ["s0"]}, shapes3)
    assert shapeless_broadcasts(norm) == ["InstanceNorm: s0 vs s1", "InstanceNorm: s1 vs s0"]


def test_a_system_that_cannot_shape_such_a_broadcast_keeps_the_graph_static():
    """tvm-cpu declares Backend.symbolic_broadcast False: a family whose weight meets a symbol (a[s0, s1] +
    w[6, 1], s0 6 or 1) is not drawn for it, while ort-cpu's oracle draws it."""
    from nnfuzz.backends.registry import backend_class
    from nnfuzz.oracles.dynamic import DynamicShapes

    assert backend_class("tvm-cpu").symbolic_broadcast is False and backend_class("ort-cpu").symbolic_broadcast
    g, policy = _add([6, 5], [6, 1], weight=True), GenPolicy(max_elems=4096)
    lifted = [DynamicShapes(share=1.0, forms=("onnx",)).lift(g, seed, policy) for seed in range(8)]
    assert any(x is not None and shapeless_broadcasts(x) for x in lifted)
    kept = [DynamicShapes(share=1.0, forms=("onnx",), broadcast=False).lift(g, seed, policy) for seed in range(8)]
    kept = [x for x in kept if x is not None]
    assert kept, "no draw of the symbols without s0 (s1 alone broadcasts against 1)"
    for x in kept:  # another draw of the symbols: s1 alone, never s0
        assert not shapeless_broadcasts(x) and x.family.dims["a"][0] is None, x.family
