"""The quant family's torch lowerings trace whole under dynamo (``fullgraph=True``, as inductor compiles them):
their scales are made by torch, not numpy, which dynamo traces into tensors and whose float ``tolist()`` it
refuses (a DequantizeLinear and a QLinearMatMul in an inductor-gpu campaign crashed so, on inductor-cpu too).
The eager backend traces without compiling, and the traced module gives eager's outputs."""
import numpy as np
import pytest
import torch

from graphs import chain
from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.torch.module import GraphModule
from nnfuzz.ops.quant import spec as Q

pytestmark = pytest.mark.slow  # torch.compile (the tier guard counts a dynamo trace as a compile)


def _traced_equals_eager(gir, *inputs):
    module = GraphModule(gir, {})
    want = module(*inputs)
    got = torch.compile(module, backend="eager", fullgraph=True)(*inputs)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.parametrize("axis,scale", [(None, 0.1), (0, [0.1, 0.25]), (1, [0.5, 0.2, 0.05])],
                         ids=["per-tensor", "per-axis-0", "per-axis-1"])
def test_quantize_then_dequantize_trace_whole(axis, scale):
    q = Q.QuantizeLinear(to=DType.int8, scale=scale, zero_point=0, axis=axis)
    dq = Q.DequantizeLinear(scale=scale, zero_point=0, axis=axis)
    x = torch.linspace(-3, 3, 6, dtype=torch.float32).reshape(2, 3)
    _traced_equals_eager(chain(q, dq, shape=(2, 3)), x)


def test_the_campaigns_int32_dequantize_traces_whole():
    """The inductor-gpu campaign's reduced case: one DequantizeLinear of an int32 [1, 1, 1, 1, 1], axis 0."""
    dq = Q.DequantizeLinear(scale=0.1, zero_point=0, axis=0)
    _traced_equals_eager(chain(dq, shape=(1, 1, 1, 1, 1), dtype=DType.int32), torch.full((1, 1, 1, 1, 1), 7, dtype=torch.int32))


def test_qlinear_matmul_traces_whole():
    op = Q.QLinearMatMul(to=DType.uint8, a_scale=0.05, a_zero_point=3, b_scale=0.1, b_zero_point=128, y_scale=0.3,
                         y_zero_point=10)
    a, b, y = AbsTensor([2, 3], DType.uint8), AbsTensor([3, 4], DType.uint8), AbsTensor([2, 4], DType.uint8)
    gir = GraphIR(vars={"a": a, "b": b, "y": y}, inputs=["a", "b"], insts=[Inst(op, ["a", "b"], ["y"])],
                  outputs=["y"]).check()
    gen = torch.Generator().manual_seed(0)
    _traced_equals_eager(gir, torch.randint(0, 255, (2, 3), dtype=torch.uint8, generator=gen),
                         torch.randint(0, 255, (3, 4), dtype=torch.uint8, generator=gen))
