"""Dynamic shapes on the real systems (docs/dynamic-shapes.md): one model with symbolic dims, built once
(dim_param inputs for the ONNX systems, torch.compile(dynamic=True) for inductor, a tf.function with None dims
for the TF systems, symbolic shape vars for TVM's Relax-native path), compiled once in the
sandbox worker and run at three shapes (the edge values 1 and the largest size bin among them); every
shape's outputs match torch eager at that shape, and the system's compile count is the one asserted (one,
or for XLA one per shape)."""
import numpy as np
import pytest
from graphs import dynamic_graph, dynamic_payload

from nnfuzz.fuzz.sandbox import Sandbox
from nnfuzz.gir import GraphIR
from nnfuzz.materialize.dynamic import build_dynamic
from nnfuzz.materialize.onnx.spec import ExportSpec
from nnfuzz.materialize.portable import pack

pytestmark = pytest.mark.slow

SYSTEMS = {"ort-cpu": "onnx", "tvm-cpu": "onnx", "openvino-cpu": "onnx", "inductor-cpu": "gir"}


@pytest.fixture(scope="module")
def built():
    b = build_dynamic(dynamic_graph(), 7, export=ExportSpec(seed=7, opset=17, spelling="canonical"))
    assert b.family is not None and len(b.shapes) == 3
    assert b.forms == {"onnx": "dynamic", "gir": "dynamic"}
    assert [d.dim_param for d in b.onnx.graph.input[0].type.tensor_type.shape.dim] == ["n", "m"]
    return b


@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_one_compile_runs_every_shape(system, built):
    pytest.importorskip({"ort-cpu": "onnxruntime", "tvm-cpu": "tvm", "openvino-cpu": "openvino",
                         "inductor-cpu": "torch._inductor"}[system])
    data = dynamic_payload(built, SYSTEMS[system])
    with Sandbox(system, test_timeout=120) as sb:
        res = sb.run(data, [s.input for s in built.shapes])
    assert res.ok, res.error
    assert res.compiles == 1 and res.unguarded is None
    assert len(res.shapes) == 3
    for got, ref in zip(res.shapes, built.shapes):
        assert got["v1"].shape == ref.output["v1"].shape
        np.testing.assert_allclose(got["v1"], ref.output["v1"], rtol=1e-5, atol=1e-6)
    assert [r.output["v1"].shape for r in built.shapes] == [(4, 3), (1, 1), (128, 5)]


def test_inductor_counts_the_recompile_that_a_size_1_guard_causes(built):
    """backend.options.dynamic=backed (mark_dynamic, dynamo's default path): the shape with a 1 where
    shape 0 had 4 and 3 fails the guards of the first graph and is compiled again; the count says so."""
    pytest.importorskip("torch._inductor")
    gir = GraphIR.loads(built.model.gir.dumps())
    gir.family = built.family
    with Sandbox("inductor-cpu", {"dynamic": "backed"}, test_timeout=120) as sb:
        res = sb.run(pack(gir.dumps(), built.model.weights), [s.input for s in built.shapes])
    assert res.ok, res.error
    assert res.compiles == 2 and res.unguarded is None  # (a backed size changed: a guard may fail there)


@pytest.fixture(scope="module")
def built_tf():
    pytest.importorskip("tensorflow")
    b = build_dynamic(dynamic_graph(), 7, export=False, tf=True)
    assert b.forms["tf"] == "dynamic"
    gir = GraphIR.loads(b.model.gir.dumps())
    gir.family = b.family
    return b, pack(gir.dumps(), b.model.weights)


# TF systems (tf.function with None dims, traced once): XLA compiles that function once per concrete shape
# (its executables are keyed by argument shapes), a plain tf.function traces once for every shape, and
# TFLite converts the None-dims function once and resizes its inputs per shape
TF_COMPILES = [("xla-cpu", {}, 3), ("xla-cpu", {"jit_compile": False}, 1), ("tflite-cpu", {}, 1)]


@pytest.mark.parametrize("system,options,compiles", TF_COMPILES, ids=[f"{s}-{o}" for s, o, _ in TF_COMPILES])
def test_tf_systems_run_the_none_dims_function_at_every_shape(system, options, compiles, built_tf):
    if system == "tflite-cpu":
        pytest.importorskip("ai_edge_litert.interpreter")
    b, data = built_tf
    with Sandbox(system, options, test_timeout=120) as sb:
        res = sb.run(data, [s.input for s in b.shapes])
    assert res.ok, res.error
    assert res.compiles == compiles
    for got, ref in zip(res.shapes, b.shapes):
        assert got["v1"].shape == ref.output["v1"].shape
        np.testing.assert_allclose(got["v1"], ref.output["v1"], rtol=1e-5, atol=1e-6)


def test_tflite_converts_the_symbolic_dims_as_minus_one(built_tf):
    """The flatbuffer's inputs keep the family's symbols as -1 in their shape_signature (the converter took
    the None dims; the interpreter resizes them per shape), the static axes as their sizes."""
    pytest.importorskip("ai_edge_litert.interpreter")
    from nnfuzz.backends.tflite import TfliteBackend

    _, data = built_tf
    _, runner, _ = TfliteBackend().compile(data)
    details = runner.get_input_details()
    assert {name: list(d["shape_signature"]) for name, d in details.items()} == {"a": [-1, -1], "b": [-1, -1]}


@pytest.mark.parametrize("layout_seed", [0, 1, 3], ids=["flat", "chain", "outline"])
def test_tvm_relax_native_model_with_symbolic_shape_vars(layout_seed):
    """tvm-cpu's Relax-native path: main takes R.Tensor((n, m)) inputs (functions cut out of it their own
    symbols), compiled once and run at the three shapes."""
    pytest.importorskip("tvm")
    b = build_dynamic(dynamic_graph(), 7, export=False, relax=True)
    assert b.forms["relax"] == "dynamic"
    gir = GraphIR.loads(b.model.gir.dumps())
    gir.family = b.family
    with Sandbox("tvm-cpu", {"format": "relax"}, test_timeout=120) as sb:
        res = sb.run(pack(gir.dumps(), b.model.weights, layout_seed), [s.input for s in b.shapes])
    assert res.ok, res.error
    assert res.compiles == 1
    for got, ref in zip(res.shapes, b.shapes):
        assert got["v1"].shape == ref.output["v1"].shape
        np.testing.assert_allclose(got["v1"], ref.output["v1"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("how", ["unbacked", "backed"])
def test_inductor_serves_a_symbol_that_broadcasts_from_1(how):
    """The H100 campaigns' false crash, as a one-Add model: a[1, s0, s1] + b[12, s1] with s0 1 at shape 0
    (stretched to 12) and 12 at shape 1. Marked unbacked (torch reports that size as never 1), dynamo
    compiled the broadcast as s0 == 12 and failed its own guard on shape 0's input ("Guard failed on the
    same frame it was created"); marked backed, the same equality was a ConstraintViolationError. The
    backend leaves such a symbol to dynamic=True: every shape runs and matches."""
    pytest.importorskip("torch._inductor")
    from nnfuzz.abstract import AbsTensor, DType
    from nnfuzz.gir import Inst, ShapeFamily
    from nnfuzz.ops.binary.spec import Add

    a, b = AbsTensor([1, 1, 11], DType.float32), AbsTensor([12, 11], DType.float32)
    g = GraphIR(vars={"a": a, "b": b, "y": Add().checked_type_transfer([a, b])[0]}, inputs=["a", "b"],
                insts=[Inst(Add(), ["a", "b"], ["y"])], outputs=["y"]).check()
    g.family = ShapeFamily({"a": [None, "s0", "s1"], "b": [None, "s1"]},
                           [{"s0": 1, "s1": 11}, {"s0": 12, "s1": 65}, {"s0": 1, "s1": 3}])
    rng = np.random.default_rng(0)
    shapes = [{"a": rng.standard_normal((1, s["s0"], s["s1"]), dtype=np.float32),
               "b": rng.standard_normal((12, s["s1"]), dtype=np.float32)} for s in g.family.assignments]
    with Sandbox("inductor-cpu", {"dynamic": how}, test_timeout=120) as sb:
        res = sb.run(pack(g.dumps(), {}), shapes)
    assert res.ok, res.error
    assert res.unguarded is None, res.unguarded  # shape 2 differs from shape 0 only in s1, unbacked or backed
    for got, x in zip(res.shapes, shapes):
        np.testing.assert_allclose(got["y"], x["a"] + x["b"], rtol=1e-6)
