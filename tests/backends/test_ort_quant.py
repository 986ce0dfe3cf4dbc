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
