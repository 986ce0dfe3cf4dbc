"""A quantized-tensor value (uint16, int4, uint4, float8: DType.quant_only) is never a graph input, weight or
output, so every cut triage makes keeps a QuantizeLinear with the DequantizeLinears that read it. Regression
(openvino-cpu campaign): `nnfuzz reduce` deleted the DequantizeLinear after a float8 QuantizeLinear and
stopped on GraphIR.check's InternalError."""
import numpy as np
import pytest

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.errors import InternalError
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.ops.elementwise.spec import Relu
from nnfuzz.ops.quant.spec import QuantizeLinear
from nnfuzz.triage.crash_prefix import prefix
from nnfuzz.triage.localize import expose_all
from nnfuzz.triage.node_deletion import Candidate, delete_node, with_pairs

F32, I4 = DType.float32, DType.int4


def _graph(readers: int = 1) -> GraphIR:
    """x -> Relu -> Q(int4) -> ``readers`` DQs -> a Relu each."""
    q = QuantizeLinear(to=I4, scale=0.25, zero_point=0, axis=None)
    t = AbsTensor([2, 3], F32)
    g = GraphIR(vars={"x": t, "r": t, "q": AbsTensor([2, 3], I4)}, inputs=["x"])
    g.insts = [Inst(Relu(), ["x"], ["r"]), Inst(q, ["r"], ["q"])]
    for k in range(readers):
        g.vars.update({f"d{k}": t, f"o{k}": t})
        g.insts += [Inst(q.closing(), ["q"], [f"d{k}"]), Inst(Relu(), [f"d{k}"], [f"o{k}"])]
    g.outputs = [f"o{k}" for k in range(readers)]
    return g.check()


def test_the_graph_refuses_a_quantized_tensor_at_its_boundary():
    g = _graph()
    with pytest.raises(InternalError, match="quantized-tensor type"):
        GraphIR(vars=g.vars, inputs=["x"], insts=g.insts[:2], outputs=["q"]).check()


@pytest.mark.parametrize("k, gone", [(1, {1, 2}), (2, {1, 2}), (0, {0}), (3, {3})])
def test_deleting_a_node_takes_its_pair_along(k, gone):
    g = _graph()
    assert with_pairs(g, k) == gone
    x = np.ones([2, 3], np.float32)
    values = {"r": x, "d0": x, "o0": x}
    cand = delete_node(Candidate(g, {}, {"x": x}), k, values)
    assert len(cand.gir.insts) == 4 - len(gone)
    assert not any(cand.gir.vars[v].dtype.quant_only for v in cand.gir.inputs + cand.gir.outputs)


def test_a_quantize_read_twice_goes_with_its_last_reader_only():
    g = _graph(readers=2)
    assert with_pairs(g, 2) == {2}           # the other DequantizeLinear still reads it
    assert with_pairs(g, 1) == {1, 2, 4}     # the QuantizeLinear takes both readers


def test_exposed_values_leave_the_quantized_tensor_out():
    g = _graph()
    assert "q" not in expose_all(g).outputs and "d0" in expose_all(g).outputs
    head = prefix(g, 2)  # what feeds the DequantizeLinear: the Relu and the QuantizeLinear
    assert [i.op.name for i in head.insts] == ["Relu", "QuantizeLinear"] and head.outputs == ["r"]


@pytest.mark.parametrize("off, fault", [(0, False), (1, False), (2, True)])
def test_the_dequantize_of_an_unexposed_quantize_takes_its_step(off, fault):
    """Regression (ort-cpu campaign, uint16 activations): the system's QuantizeLinear may be a step off near a
    tie (its accuracy), but its uint16 output is not exposed; the local-error scan feeds the DequantizeLinear
    the reference's value, so the DequantizeLinear may be that step off too, not more (it was charged 860 ulps
    for one step)."""
    from nnfuzz.reference import evaluate
    from nnfuzz.triage.local_error import scan

    q = QuantizeLinear(to=DType.uint16, scale=0.000205, zero_point=30375, axis=None)
    t = AbsTensor([4], F32)
    g = GraphIR(vars={"x": t, "q": AbsTensor([4], DType.uint16), "y": t}, inputs=["x"],
                insts=[Inst(q, ["x"], ["q"]), Inst(q.closing(), ["q"], ["y"])], outputs=["y"]).check()
    x = {"x": np.array([-3.6784, 0.5, 1.25, -0.001], np.float32)}
    y = evaluate(g, {}, x)["y"].copy()
    y[0] += np.float32(off * 0.000205)
    got = scan(g, {}, x, {"y": y})
    assert (got.root is not None) == fault, got.root
    assert "q" in got.skipped and got.judged == 1
