"""The precision allowance's band on integer and bool outputs (triage/local_error.py): a system that computes
float16 through float32 may give either end of the band or the exact value between them."""
import numpy as np

from nnfuzz.abstract import OP_REGISTRY, DType
from nnfuzz.abstract.op import load_builtin_ops
from nnfuzz.triage.local_error import node_errors

load_builtin_ops()


def cast_to_bool(x, got, widened):
    op = OP_REGISTRY["Cast"](to=DType.bool)
    return node_errors(op, 0, [x], {"y": got}, {"y": DType.bool}, widened)[0]


def test_a_cast_to_bool_of_a_widened_zero_may_stay_false():
    """OpenVINO (float16 computed in float32) gave Cast(0.0 float16) -> False, the exact answer: both ends of
    the band (0 moved by half an ulp either way) read True, so a band without the exact value called it a
    values fault (campaign folder openvino-cpu/0094 of issue 26 item 7)."""
    x = np.array([0.0, 1.0, -2.0], np.float16)
    exact = np.array([False, True, True])
    assert cast_to_bool(x, exact, ("float16",)).kind is None
    assert cast_to_bool(x, np.array([True, True, True]), ("float16",)).kind is None  # either side of 0
    wrong = cast_to_bool(x, np.array([False, False, True]), ("float16",))
    assert wrong.kind == "values" and wrong.ulps == 1.0  # 1.0 is far from zero on both sides


def test_without_the_allowance_only_the_exact_value_passes():
    x = np.array([0.0, 1.0], np.float16)
    assert cast_to_bool(x, np.array([False, True]), ()).kind is None
    assert cast_to_bool(x, np.array([True, True]), ()).kind == "values"
