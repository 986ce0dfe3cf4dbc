"""The quant family's allowance of one quantization step: declared on the spec (``accuracy.steps``), used
by the local error of a node (triage/local_error.py) and by the end-to-end verdict through the float64
twin, whose jittered runs round values within rounding of a half step to each side (ops/quant/search.py)."""
import numpy as np

from graphs import chain
from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.model import build_model
from nnfuzz.ops.quant import spec as Q
from nnfuzz.triage.local_error import node_errors
from nnfuzz.verdict import compare

SCALE = 0.1


def _q(to=DType.int8, zp=0):
    return Q.QuantizeLinear(to=to, scale=SCALE, zero_point=zp, axis=None)


def test_a_quantize_one_step_off_is_within_its_budget_and_two_are_not():
    x = np.array([0.25, -1.0, 3.0], dtype=np.float32)
    want = np.array([2, -10, 30], dtype=np.int8)
    for got, fault in ((want, False), (want + np.int8(1), False), (want - np.array([0, 0, 2], np.int8), True)):
        (e,) = node_errors(_q(), 0, [x], {"y": got}, {"y": DType.int8})
        assert (e.kind is not None) is fault, (got, e)
    dq = Q.DequantizeLinear(scale=SCALE, zero_point=0, axis=None)  # exact: no steps
    (e,) = node_errors(Q.MatMulInteger(a_zero_point=0, b_zero_point=0), 0,
                       [np.ones((2, 3), np.uint8), np.ones((3, 2), np.uint8)], {"y": np.full((2, 2), 4, np.int32)},
                       {"y": DType.int32})
    assert e.kind == "values" and dq.accuracy.steps == 0


def test_the_twin_allows_a_step_at_a_tie_and_not_elsewhere():
    # x / 0.1 lands within float32 rounding of 2.5 and 7.5 (a tie) for the first two elements
    x = np.array([0.25, 0.75, 0.31, -0.52], dtype=np.float32)
    gir = chain(_q(), Q.DequantizeLinear(scale=SCALE, zero_point=0, axis=None), shape=(4,))
    model = build_model(gir, 0, export=False, values=({}, {"x": x}), twins=True)
    o = model.oracle
    (name,) = gir.outputs
    want = o.output[name]
    for k, ok in ((0, True), (1, True), (2, False), (3, False)):
        for sign in (1, -1):
            got = want.copy()
            got[k] += np.float32(sign * SCALE)
            verdict = compare({name: want}, {name: got}, twin=o.output_f64, jitter=o.output_f64_jitter)
            assert verdict.is_bug is (not ok), (k, sign, verdict.summary)
