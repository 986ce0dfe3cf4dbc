"""Which ONNX node an instruction or an error names (nnfuzz/triage/onnx_nodes.py, crash_prefix.py)."""
from types import SimpleNamespace

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from nnfuzz.triage.onnx_nodes import single_op


def _model(nodes, inits=()):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("v0", TensorProto.FLOAT, None)], list(inits))
    return helper.make_model(g)


GIR = SimpleNamespace(vars={"x": None, "v0": None})
AXES = numpy_helper.from_array(np.array([1], np.int64), "axes")


def test_a_node_seen_through_a_squeeze_names_the_instruction():
    """LogSumExp(keepdims=0) spelled ReduceLogSumExp(keepdims=1) then Squeeze is the ReduceLogSumExp, as
    when it is spelled as one node: one OpenVINO reduce fault, one root cause (issue 26, item 7)."""
    spelled = _model([helper.make_node("ReduceLogSumExp", ["x", "axes"], ["_redu1"], keepdims=1),
                      helper.make_node("Squeeze", ["_redu1", "axes"], ["v0"])], [AXES])
    one = _model([helper.make_node("ReduceLogSumExp", ["x", "axes"], ["v0"], keepdims=0)], [AXES])
    assert single_op(GIR, spelled, "v0") == single_op(GIR, one, "v0") == "ReduceLogSumExp"


def test_two_computing_nodes_name_none():
    two = _model([helper.make_node("Exp", ["x"], ["_exp1"]), helper.make_node("Log", ["_exp1"], ["v0"])])
    assert single_op(GIR, two, "v0") is None
    squeezed = _model([helper.make_node("Exp", ["x"], ["_exp1"]), helper.make_node("Log", ["_exp1"], ["_log2"]),
                       helper.make_node("Squeeze", ["_log2", "axes"], ["v0"])], [AXES])
    assert single_op(GIR, squeezed, "v0") is None


def test_a_chain_of_one_type_names_that_type():
    """nnfuzz's Relu6 spelled Clip(Clip(x, 0), max=6) is a Clip, as bugs/kept/0061's one Clip is (an
    openvino-cpu campaign signed the same int16 shape fault `Relu6` apart from it)."""
    lo, hi = (numpy_helper.from_array(np.array(v, np.float32), n) for v, n in ((0.0, "lo"), (6.0, "hi")))
    clips = _model([helper.make_node("Clip", ["x", "lo"], ["_clip1"]), helper.make_node("Clip", ["_clip1", "", "hi"], ["v0"])],
                   [lo, hi])
    assert single_op(GIR, clips, "v0") == "Clip"


def test_an_error_naming_a_node_by_its_output_finds_its_instruction():
    """OpenVINO names its nodes after their ONNX outputs: "[CPU] Interpolate node with name 'v1' ..."."""
    from graphs import chain

    from nnfuzz.materialize.model import build_model
    from nnfuzz.ops.elementwise import spec as E
    from nnfuzz.triage.crash_prefix import instruction_named_in

    gir = chain(E.Relu(), E.Tanh(), E.Abs())
    model = build_model(gir, 0, values=({}, {"x": np.ones(gir.vars["x"].shape, np.float32)}))
    assert instruction_named_in("[CPU] Interpolate node with name 'v1' only supports resize", gir, model.onnx) == 1
    assert instruction_named_in("node with name 'nope' failed", gir, model.onnx) is None


def test_only_a_fault_rounding_cannot_explain_is_searched_for_a_cut():
    """Fusion changes float rounding legitimately: a float values fault that full exposure removes keeps
    the first divergent node; a wrong shape, dtype, a missing output, or wrong values computed from
    integers alone are searched for the cut that removes them."""
    from graphs import chain

    from nnfuzz.abstract import DType
    from nnfuzz.ops.elementwise import spec as E
    from nnfuzz.triage.fusion_cut import unexplained_by_rounding
    from nnfuzz.verdict import DEFAULT_TOLERANCES as TOL

    floats = chain(E.Relu(), E.Abs(), shape=(3, 1))
    ints = chain(E.Relu(), E.Abs(), shape=(3, 1), dtype=DType.int32)
    ref = {"v1": np.zeros((3, 1), np.float32)}
    assert not unexplained_by_rounding(floats, {"v1": np.ones((3, 1), np.float32)}, ref, TOL)
    assert unexplained_by_rounding(floats, {"v1": np.zeros((1, 1), np.float32)}, ref, TOL)
    assert unexplained_by_rounding(floats, {"v1": np.zeros((3, 1), np.float64)}, ref, TOL)
    assert unexplained_by_rounding(floats, {}, ref, TOL)
    iref = {"v1": np.zeros((3, 1), np.int32)}
    assert unexplained_by_rounding(ints, {"v1": np.ones((3, 1), np.int32)}, iref, TOL)
    assert not unexplained_by_rounding(ints, {"v1": np.zeros((3, 1), np.int32)}, iref, TOL)


def test_parameters_computed_from_shapes_do_not_hide_the_node():
    """A Resize whose sizes are computed from the input's Shape is the Resize; an Add of x and a value
    computed from x is not one node's work."""
    sizes = _model([helper.make_node("Shape", ["x"], ["_shap1"]), helper.make_node("Mul", ["_shap1", "two"], ["_mul2"]),
                    helper.make_node("Resize", ["x", "", "", "_mul2"], ["v0"])],
                   [numpy_helper.from_array(np.array([1, 2], np.int64), "two")])
    assert single_op(GIR, sizes, "v0") == "Resize"
    valued = _model([helper.make_node("Sigmoid", ["x"], ["_sigm1"]), helper.make_node("Add", ["x", "_sigm1"], ["v0"])])
    assert single_op(GIR, valued, "v0") is None


def test_a_weight_held_as_an_initializer_is_a_value():
    """A Gelu of a weight, spelled Mul(w, 0.5 * (1 + Erf(w / sqrt2))) with w an initializer, is several nodes
    computing on a graph value, not one Mul of constants (tf-cpu's float64 Gelu replayed as 'Mul' once)."""
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w0")
    consts = [numpy_helper.from_array(np.array(v, np.float32), n) for v, n in ((1.4142135, "c"), (1.0, "one"), (0.5, "half"))]
    gelu = helper.make_graph(
        [helper.make_node("Div", ["w0", "c"], ["_div1"]), helper.make_node("Erf", ["_div1"], ["_erf2"]),
         helper.make_node("Add", ["_erf2", "one"], ["_add3"]), helper.make_node("Mul", ["_add3", "half"], ["_mul4"]),
         helper.make_node("Mul", ["w0", "_mul4"], ["v0"])], "g", [],
        [helper.make_tensor_value_info("v0", TensorProto.FLOAT, None)], [w, *consts])
    assert single_op(SimpleNamespace(vars={"w0": None, "v0": None}), helper.make_model(gelu), "v0") is None


def test_the_first_divergent_node_stands_in_under_the_name_the_system_ran_it_by():
    """An openvino-cpu campaign signed HardSigmoid's beta fault `HardSigmoidAlphaBeta` (nnfuzz's op), apart
    from bugs/kept/0013's `HardSigmoid`, where no cut localized it: the stand-in node carries its ONNX op."""
    from graphs import chain

    from nnfuzz.materialize.model import build_model
    from nnfuzz.ops.activation.spec import HardSigmoidAlphaBeta
    from nnfuzz.triage.dedup import signature
    from nnfuzz.triage.localize import _system_op

    gir = chain(HardSigmoidAlphaBeta(alpha=0.25, beta=0.0))
    model = build_model(gir, 0, values=({}, {"x": np.ones(gir.vars["x"].shape, np.float32)}))
    assert _system_op(gir, model, "v0") == "HardSigmoid"
    node = {"op": "HardSigmoidAlphaBeta(alpha=0.25, beta=0.0)", "dtype": "float32", "index": 0, "var": "v0"}
    meta = {"system": "openvino-cpu", "symptom": "inconsistency", "summary": "v0: 1/6 values off",
            "first_divergent_node": node, "root_cause": {**node, "op": "HardSigmoidAlphaBeta", "kind": None,
                                                         "method": "first-divergence", "system_op": "HardSigmoid"}}
    assert signature(meta) == "openvino-cpu | inconsistency | HardSigmoid | values"
