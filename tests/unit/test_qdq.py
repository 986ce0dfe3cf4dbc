"""QDQ graphs (nnfuzz/generate/qdq.py): the quantizable float32 nodes read their inputs through
QuantizeLinear -> DequantizeLinear and are followed by such a pair, with scales calibrated on the model's
values; weights int8 or int4 symmetric (per channel or in blocks where drawn), activations of the drawn
type, each among the types the campaign's systems take, data movement keeping its input's scale, one pair
per tensor whatever its readers; and mgen.quantized is a share or null."""
import dataclasses

import numpy as np
import pytest

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.errors import ConfigError
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.generate.qdq import ACT_TYPES, WEIGHT_TYPES, insert_qdq, qdq_types, quantized_draw
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.ops.conv.spec import Conv2d
from nnfuzz.ops.elementwise.spec import Relu
from nnfuzz.ops.pool.spec import MaxPool2d
from nnfuzz.ops.quant.spec import QRANGE, DequantizeLinear, QuantizeLinear
from nnfuzz.reference import evaluate

F32 = DType.float32


def _conv_graph() -> GraphIR:
    """x -> Conv2d(w) -> Relu -> MaxPool2d, and Relu's output read twice (by the pool and as an output)."""
    g = GraphIR()
    g.vars.update(x=AbsTensor([1, 2, 6, 6], F32), w=AbsTensor([3, 2, 3, 3], F32))
    g.inputs, g.weights = ["x"], ["w"]
    conv, relu, pool = Conv2d(1, 1, 0, 0, 1, 1, 1), Relu(), MaxPool2d(2, 2, 2, 2, 0, 0, 1, 1)
    for op, ins, out in ((conv, ["x", "w"], "c"), (relu, ["c"], "r"), (pool, ["r"], "p")):
        g.vars[out] = op.checked_type_transfer([g.vars[v] for v in ins])[0]
        g.insts.append(Inst(op, ins, [out]))
    g.outputs = ["p", "r"]
    return g.check()


def _values(seed=0):
    rng = np.random.default_rng(seed)
    return {"w": rng.standard_normal([3, 2, 3, 3]).astype(np.float32)}, \
        {"x": rng.standard_normal([1, 2, 6, 6]).astype(np.float32)}


def _qdq(seed, types=None):
    g = _conv_graph()
    return g, *insert_qdq(g, seed, _values(), types)


@pytest.mark.parametrize("seed", range(6))
def test_each_quantizable_node_sits_between_dq_and_q(seed):
    g, q, info = _qdq(seed)
    producer = {o: inst for inst in q.insts for o in inst.outputs}
    for inst in q.insts:
        if inst.op.name in ("Conv2d", "Relu", "MaxPool2d"):
            assert all(isinstance(producer[v].op, DequantizeLinear) for v in inst.inputs), inst
            (out,) = inst.outputs
            readers = [i for i in q.insts if out in i.inputs]
            assert len(readers) == 1 and isinstance(readers[0].op, QuantizeLinear), inst
    assert info["nodes"] == 3 and info["pairs"] == 5  # x, w, and the three outputs
    assert q.inputs == g.inputs and q.weights == g.weights
    assert all(isinstance(producer[o].op, DequantizeLinear) for o in q.outputs)  # float outputs, dequantized


@pytest.mark.parametrize("seed", range(12))
def test_scales_cover_the_calibration_values_and_the_weights_are_symmetric(seed):
    g, q, info = _qdq(seed)
    float_vals, q_vals = evaluate(g, *_values()), evaluate(q, *_values())
    quantizers = {inst.inputs[0]: inst.op for inst in q.insts if isinstance(inst.op, QuantizeLinear)}
    w = quantizers["w"]
    assert w.to.value == info["weights"] and w.to in WEIGHT_TYPES and w.zero_point == 0
    if info["blocked"]:  # [3, 2, 3, 3] in blocks along the input channels: one block of 2 (the size dividing 2)
        assert w.axis == 1 and w.block_size == 2 and len(w.scale) == 3 * 1 * 3 * 3
    else:
        assert (w.axis == 0 and len(w.scale) == 3) if info["per_channel"] else w.axis is None
    for var, op in quantizers.items():
        step = np.max(op.scale) if op.axis is not None else op.scale
        assert op.to.value == info["activations"] or var == "w"
        # the range seen is covered (within the drawn narrowing down to 0.75, which saturates a little)
        lo, hi = QRANGE[op.to]
        span = (hi - lo) * step
        assert np.ptp(np.append(float_vals.get(var, q_vals[var]), 0.0)) <= span / 0.749 + 1e-6, (var, op)
    pool = next(i for i in q.insts if i.op.name == "MaxPool2d")
    (pooled_from,) = pool.inputs
    into = next(i.op for i in q.insts if i.outputs == [pooled_from]).scale  # the DQ before the pool
    after = next(i.op for i in q.insts if i.inputs == pool.outputs).scale   # the Q after it
    assert into == after  # data movement keeps its input's scale


def test_the_draw_is_a_share_of_seeds_and_needs_the_quant_ops():
    from nnfuzz.generate.opset import select_ops

    policy = GenPolicy()
    ops = select_ops(policy)
    drawn = [quantized_draw(policy, 0.3, s, ops) is not None for s in range(400)]
    assert 0.2 < np.mean(drawn) < 0.4
    q = next(quantized_draw(policy, 0.3, s, ops) for s in range(400) if drawn[s])
    assert q.dtypes == ["float32", "int64", "bool"] and q.op_weights["Conv2d"] > 1
    assert quantized_draw(policy, 1.0, 0, [c for c in ops if c.name != "QuantizeLinear"]) is None
    assert quantized_draw(policy, 0.0, 0, ops) is None
    assert quantized_draw(dataclasses.replace(policy, dtypes=["float16"]), 1.0, 0, ops) is None


@pytest.mark.parametrize("bad", [1.5, -0.1, "half", True])
def test_mgen_quantized_is_a_share_or_null(bad):
    assert GenPolicy(quantized=None).quantized is None and GenPolicy(quantized=0.5).quantized == 0.5
    with pytest.raises(ConfigError, match="mgen.quantized"):
        GenPolicy(quantized=bad)


def test_the_types_drawn_are_those_the_systems_take():
    """Over seeds every activation and weight type comes up, blocked weights too; limited to what the probed
    rows and the QDQ opset allow, only those come up (int16/uint16/int4 and blocks need opset 21)."""
    seen = {k: {_qdq(s)[2][k] for s in range(60)} for k in ("activations", "weights", "blocked")}
    assert seen == {"activations": {t.value for t in ACT_TYPES}, "weights": {t.value for t in WEIGHT_TYPES},
                    "blocked": {False, True}}
    f32, i16 = DType.float32, DType.int16
    rows = {"QuantizeLinear": {((f32,), (t,)) for t in (DType.uint8, DType.int8, i16, DType.int4)},
            "DequantizeLinear": {((t,), (f32,)) for t in (DType.uint8, DType.int8, i16)}}
    assert qdq_types(rows, 21) == {DType.uint8, DType.int8, i16, "blocked"}  # int4: no DequantizeLinear
    assert qdq_types(rows, 19) == {DType.uint8, DType.int8}
    assert qdq_types(None, None) == set(ACT_TYPES) | set(WEIGHT_TYPES) | {"blocked"}
    assert "blocked" not in qdq_types(None, 21, blocked=False)  # the systems' blocked probe failed
    assert qdq_types(None, None, dtypes={DType.uint8, DType.int8}) == {DType.uint8, DType.int8, "blocked"}
    only = qdq_types(rows, 19)
    for s in range(20):
        info = _qdq(s, only)[2]
        drawn = (info["activations"], info["weights"], info["blocked"])
        assert drawn in {("uint8", "int8", False), ("int8", "int8", False)}
