"""ONNX Runtime's fused QDQ kernels against the reference: a fused QLinearAdd rounds the ties of its
requantization its own way, all in one direction or each its own, and a sum over such values is rounding
noise (the quant tie rules, ops/quant/search.py); a result off by more where no tie is near is not. (Where
the twin's rounding-level runs flip a tie, the verdict knows the value only to its scale: a wider margin.)"""
import numpy as np
import pytest

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.model import add_twins, build_model
from nnfuzz.materialize.onnx.spec import ExportSpec
from nnfuzz.ops.binary.spec import Add
from nnfuzz.ops.quant.spec import DequantizeLinear, QuantizeLinear
from nnfuzz.ops.reduce.spec import ReduceSum
from nnfuzz.verdict import compare

ort = pytest.importorskip("onnxruntime")


def _graph() -> GraphIR:
    """DQ(a) + DQ(b) -> Q -> DQ -> ReduceSum over rows of 6: the scales of b and of the sum in a ratio of
    5/4 (found by a campaign), so that a quarter of the sums are exact ties of the requantization."""
    g = GraphIR()
    g.vars.update(a=AbsTensor([84, 6], DType.uint8), b=AbsTensor([84, 6], DType.uint8))
    g.inputs = ["a", "b"]
    sy = 0.007814936339855194
    steps = [(DequantizeLinear(scale=1.0, zero_point=0, axis=None), ["a"], "ad"),
             (DequantizeLinear(scale=sy * 1.25, zero_point=102, axis=None), ["b"], "bd"),
             (Add(), ["ad", "bd"], "s"), (QuantizeLinear(to=DType.uint8, scale=sy, zero_point=127, axis=None), ["s"], "q"),
             (DequantizeLinear(scale=sy, zero_point=127, axis=None), ["q"], "d"), (ReduceSum(1, keepdims=True), ["d"], "r")]
    for op, ins, out in steps:
        g.vars[out] = op.checked_type_transfer([g.vars[v] for v in ins])[0]
        g.insts.append(Inst(op, ins, [out]))
    g.outputs = ["r"]
    return g.check()


def test_a_fused_requantization_rounding_its_ties_its_own_way_is_noise():
    rng = np.random.default_rng(0)
    inputs = {"a": rng.integers(0, 2, (84, 6)).astype(np.uint8), "b": rng.integers(60, 140, (84, 6)).astype(np.uint8)}
    model = add_twins(build_model(_graph(), 0, export=ExportSpec(opset=21, spelling="canonical"), values=({}, inputs)))
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    (got,) = ort.InferenceSession(model.onnx.SerializeToString(), opts).run(None, inputs)
    o = model.oracle
    assert np.abs(got - o.output["r"]).max() > 0  # the fused kernel does round some ties the other way
    assert not compare(o.output, {"r": got}, twin=o.output_f64, jitter=o.output_f64_jitter).is_bug
    env = np.abs(o.output_f64_jitter["r"] - o.output_f64["r"]).max(axis=0)
    row = int(np.argmin(env))  # a row without ties: four steps there are no rounding
    assert env[row] < 1e-3, env.min()
    wrong = got.copy()
    wrong[row] += np.float32(4 * 0.007814936339855194)
    assert compare(o.output, {"r": wrong}, twin=o.output_f64, jitter=o.output_f64_jitter).is_bug


def _int4_weight_matmul_model() -> bytes:
    """Q/DQ(int4 weight) -> MatMul + Add -> Q/DQ(uint16): the campaign 27 graph (ort-cpu-dynamic-0, 0006) that
    ORT turns into a MatMulNBits from level extended on."""
    from onnx import TensorProto, helper, numpy_helper

    def init(name, value, dtype):
        return numpy_helper.from_array(np.asarray(value, dtype=dtype), name) if dtype is not None else \
            helper.make_tensor(name, TensorProto.INT4, [], [0])

    w = np.array([[0.44544613, 0.06062928, 0.55937606]], np.float32)
    nodes = [helper.make_node("QuantizeLinear", ["w", "ws", "wz"], ["wq"]),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"]),
             helper.make_node("Transpose", ["wd"], ["wt"], perm=[1, 0]),
             helper.make_node("MatMul", ["x", "wt"], ["m"]), helper.make_node("Add", ["m", "b"], ["y"]),
             helper.make_node("QuantizeLinear", ["y", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["out"])]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.float32(0.3109578), "ws"),
             init("wz", None, None), numpy_helper.from_array(np.float32(3.0223997e-05), "ys"),
             numpy_helper.from_array(np.uint16(0), "yz")]
    f = TensorProto.FLOAT
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", f, [3]), helper.make_tensor_value_info("b", f, [1])],
                              [helper.make_tensor_value_info("out", f, [1])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)]).SerializeToString()


@pytest.mark.parametrize("level, right", [(0, True), (4, False)])
def test_the_int4_weight_matmul_fusion_runs_at_its_most_accurate_unless_asked(level, right):
    """ORT's default accuracy level for the fused MatMulNBits (4) computes with int8 activations: 36 steps of
    the uint16 output off here, a false alarm of every int4/int8-weight Linear; the backend's default (0) is
    exact to a step (campaign 27/29 folders; docs/findings-ort-cpu.md)."""
    from nnfuzz.backends.ort import OrtBackend

    backend = OrtBackend(matmulnbits_accuracy_level=level)
    inputs = {"x": np.array([0.12692308, 1.3132547, 0.6931472], np.float32), "b": np.array([-0.16341932], np.float32)}
    got = backend.run(backend.compile(_int4_weight_matmul_model()), inputs)["out"]
    wq = np.clip(np.round(np.array([0.44544613, 0.06062928, 0.55937606]) / 0.3109578), -8, 7) * 0.3109578
    want = np.round((inputs["x"].astype(np.float64) @ wq + inputs["b"][0]) / 3.0223997e-05) * 3.0223997e-05
    assert bool(abs(float(got[0]) - want) <= 3.1e-05) is right, (got, want)


def _float_weight_conv_transpose():
    """DQ(x) -> ConvTranspose(float weight) -> Q -> DQ, and its uint8 input."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(np.float32(0.05), "xs"), numpy_helper.from_array(np.uint8(128), "xz"),
             numpy_helper.from_array(rng.normal(size=[2, 3, 3, 3]).astype(np.float32), "w"),
             numpy_helper.from_array(np.float32(0.02), "ys"), numpy_helper.from_array(np.uint8(128), "yz")]
    graph = helper.make_graph([
        helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]), helper.make_node("ConvTranspose", ["xf", "w"], ["y"]),
        helper.make_node("QuantizeLinear", ["y", "ys", "yz"], ["yq"]), helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["out"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 3, 6, 6])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]).SerializeToString()
    return model, rng.integers(100, 156, [1, 2, 4, 4]).astype(np.uint8)


def test_a_float_weight_between_qdq_activations_is_not_quantized_unless_asked():
    """ORT's WeightBiasQuantization pass quantizes a float ConvTranspose weight between Q/DQ activations to
    uint8 (per tensor) so that a QLinear kernel takes it: by design lossy, 1 to 3 output steps off here, where
    an ort-cpu campaign's folders (ConvTranspose, one step) were false alarms. The backend leaves it off by
    default, and then agrees with ORT unoptimized exactly; ``weight_bias_quantization=true`` turns it on."""
    from nnfuzz.backends.ort import OrtBackend

    model, x = _float_weight_conv_transpose()

    def out(**options):
        backend = OrtBackend(**options)
        return backend.run(backend.compile(model), {"x": x})["out"]
    exact = out(opt_level="disable")
    np.testing.assert_array_equal(out(), exact)
    quantized = out(weight_bias_quantization=True)
    assert int(np.sum(quantized != exact)) > 10 and float(np.max(np.abs(quantized - exact))) <= 3 * 0.02 + 1e-6
