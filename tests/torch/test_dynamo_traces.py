"""Lowerings trace whole under dynamo (``fullgraph=True``, as inductor compiles them); an inductor-gpu campaign
(torch 2.11) met two ways nnfuzz's own code broke the trace, each a false crash:
- the quant family made its scales with numpy, which dynamo traces into tensors and whose float ``tolist()``
  it refuses (on torch 2.13 too);
- DType set ``__hash__`` on its own class, and dynamo 2.11 refuses to hash such an object (a lookup keyed by
  a dtype inside a lowering: ``DType.torch()``, the quant ranges).
The eager backend traces without compiling, and the traced module gives eager's outputs."""
import numpy as np
import pytest
import torch

from graphs import chain
from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.torch.module import GraphModule
from nnfuzz.ops.quant import spec as Q

# torch.compile: the tier guard counts a dynamo trace as a compile
slow = pytest.mark.slow


def _traced_equals_eager(gir, *inputs):
    module = GraphModule(gir, {})
    want = module(*inputs)
    got = torch.compile(module, backend="eager", fullgraph=True)(*inputs)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


@slow
@pytest.mark.parametrize("axis,scale", [(None, 0.1), (0, [0.1, 0.25]), (1, [0.5, 0.2, 0.05])],
                         ids=["per-tensor", "per-axis-0", "per-axis-1"])
def test_quantize_then_dequantize_trace_whole(axis, scale):
    q = Q.QuantizeLinear(to=DType.int8, scale=scale, zero_point=0, axis=axis)
    dq = Q.DequantizeLinear(scale=scale, zero_point=0, axis=axis)
    x = torch.linspace(-3, 3, 6, dtype=torch.float32).reshape(2, 3)
    _traced_equals_eager(chain(q, dq, shape=(2, 3)), x)


@slow
def test_the_campaigns_int32_dequantize_traces_whole():
    """The inductor-gpu campaign's reduced case: one DequantizeLinear of an int32 [1, 1, 1, 1, 1], axis 0."""
    dq = Q.DequantizeLinear(scale=0.1, zero_point=0, axis=0)
    _traced_equals_eager(chain(dq, shape=(1, 1, 1, 1, 1), dtype=DType.int32), torch.full((1, 1, 1, 1, 1), 7, dtype=torch.int32))


@slow
def test_qlinear_matmul_traces_whole():
    op = Q.QLinearMatMul(to=DType.uint8, a_scale=0.05, a_zero_point=3, b_scale=0.1, b_zero_point=128, y_scale=0.3,
                         y_zero_point=10)
    a, b, y = AbsTensor([2, 3], DType.uint8), AbsTensor([3, 4], DType.uint8), AbsTensor([2, 4], DType.uint8)
    gir = GraphIR(vars={"a": a, "b": b, "y": y}, inputs=["a", "b"], insts=[Inst(op, ["a", "b"], ["y"])],
                  outputs=["y"]).check()
    gen = torch.Generator().manual_seed(0)
    _traced_equals_eager(gir, torch.randint(0, 255, (2, 3), dtype=torch.uint8, generator=gen),
                         torch.randint(0, 255, (3, 4), dtype=torch.uint8, generator=gen))


def test_dtype_does_not_set_hash_on_its_own_class():
    """What dynamo 2.11 checks (``type(obj).__dict__.get("__hash__")``) before it hashes a dtype."""
    assert "__hash__" not in DType.__dict__ and hash(DType.int8) == object.__hash__(DType.int8)


@slow
def test_range_to_a_carrier_dtype_traces_whole():
    """The campaign's reduced case: Range, whose lowering converts with ``DType.torch()`` (a lookup keyed by
    dtype), after a Reciprocal."""
    from nnfuzz.ops.elementwise.spec import Reciprocal
    from nnfuzz.ops.indexing.spec import Range

    rng = Range(0, 1.0, delta=0.5, dtype=DType.float32)
    x = AbsTensor([4], DType.float32)
    (r,) = rng.checked_type_transfer([x])
    gir = GraphIR(vars={"x": x, "v0": x, "v1": r}, inputs=["x"],
                  insts=[Inst(Reciprocal(), ["x"], ["v0"]), Inst(rng, ["v0"], ["v1"])], outputs=["v0", "v1"]).check()
    _traced_equals_eager(gir, torch.tensor([1.0, 2.0, 4.0, 8.0]))
