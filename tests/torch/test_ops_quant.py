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


def test_a_value_quantized_next_may_be_off_by_a_step_of_that_quantization():
    """openvino-cpu computes a Clip between DQ and Q on the integer grid (it moves the dequantization past
    the Clip and rounds the bound 1.0 to 30 steps of 0.033: 0.991); the Q after it is then at most one step
    off, which the Q's spec allows. The same error on a value nothing quantizes is the system's fault."""
    from nnfuzz.ops.select.spec import Clip
    from nnfuzz.triage.local_error import scan

    dq = Q.DequantizeLinear(scale=0.033035, zero_point=152, axis=None)
    clip = Clip(min=-6.0, max=1.0)
    after = Q.QuantizeLinear(to=DType.uint8, scale=0.0188926, zero_point=255, axis=None)
    x = np.array([183, 190, 150], dtype=np.uint8)
    quantized = chain(dq, clip, after, shape=(3,), dtype=DType.uint8)
    got = {"v0": (x.astype(np.float64) - 152) * np.float32(0.033035), "v1": None, "v2": None}
    got["v0"] = got["v0"].astype(np.float32)
    got["v1"] = np.minimum(got["v0"], np.float32(30 * 0.033035))  # the bound on the grid
    got["v2"] = np.full(3, 255, np.uint8)
    got["v2"][2] = np.uint8(np.clip(np.rint(got["v1"][2] / np.float32(0.0188926)) + 255, 0, 255))
    assert scan(quantized, {}, {"x": x}, got).root is None
    plain = chain(dq, clip, shape=(3,), dtype=DType.uint8)
    root = scan(plain, {}, {"x": x}, {k: got[k] for k in ("v0", "v1")}).root
    assert root is not None and root.op == "Clip" and root.var == "v1"


def test_the_twin_runs_every_quant_op():
    """Each quant op's tie rule runs in the jittered twin runs (a QLinearMatMul's once raised TypeError and
    stopped a campaign), and a one-op graph's twin is its reference where no tie is near."""
    from nnfuzz.abstract import OP_REGISTRY
    from nnfuzz.errors import ConstraintError
    from nnfuzz.generate import generate_graph
    from nnfuzz.generate.policy import GenPolicy
    from nnfuzz.materialize.model import add_twins

    for cls in sorted((c for c in OP_REGISTRY.values() if c.family == "quant"), key=lambda c: c.name):
        for seed in range(20):
            try:
                gir = generate_graph(GenPolicy(seed=seed, max_nodes=1, include=[cls.name], max_elems=64))
            except ConstraintError:
                continue
            model = add_twins(build_model(gir, seed, export=False))
            assert model.twin_note is None or model.twin_note == "", (cls.name, model.twin_note)
            assert set(model.oracle.output_f64) == set(gir.outputs), cls.name
            break
        else:
            raise AssertionError(f"no one-op graph of {cls.name}")
