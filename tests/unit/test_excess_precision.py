"""XLA keeps bfloat16/float16 values of a fused computation in float32 (xla_allow_excess_precision, on by
default): an xla-cpu campaign's MeanVarianceNormalization in bfloat16 then Cast to float32 gave 1.6987952, the
unrounded value, where the graph's bfloat16 rounding gives 1.6953125. Each node's own error takes a bfloat16
input of such a system as known to half an ulp (Backend.precision_allowance), so the Cast is within its budget;
a system without the allowance is still held to the exact cast."""
import ml_dtypes
import numpy as np

from nnfuzz.abstract import DType
from nnfuzz.ops.select.spec import Cast
from nnfuzz.triage.local_error import node_errors
from nnfuzz.triage.repro import widened_of


def test_xla_may_carry_a_bfloat16_value_unrounded_into_a_cast():
    op = Cast(to=DType.float32)
    ins = [np.array([1.6953125], dtype=ml_dtypes.bfloat16)]
    got = {"v10": np.array([1.698795199394226], dtype=np.float32)}
    (strict,) = node_errors(op, 0, ins, got, {"v10": DType.float32})
    assert strict.kind == "precision", strict
    assert "bfloat16" in widened_of("xla-cpu") and "bfloat16" not in widened_of("tf-cpu")
    (xla,) = node_errors(op, 0, ins, got, {"v10": DType.float32}, widened_of("xla-cpu"))
    assert xla.kind is None, xla
    far = {"v10": np.array([1.71], dtype=np.float32)}  # beyond half a bfloat16 ulp (0.0039): still a fault
    (beyond,) = node_errors(op, 0, ins, far, {"v10": DType.float32}, widened_of("xla-cpu"))
    assert beyond.kind == "precision", beyond
