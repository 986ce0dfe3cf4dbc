"""ONNX Runtime computes float16 nodes without a float16 kernel in float32 and drops the Casts between
them (backends/ort_knowledge.FLOAT16_IN_FLOAT32): a float16 Sin whose two outputs round to a tie feeds an
ArgMax that reads them unrounded and picks the second. With ORT's precision allowance the ArgMax's inputs
are known to within half an ulp, so the tie may break either way: rounding noise, not a bug."""
import numpy as np
import pytest
from graphs import chain

from nnfuzz.abstract import DType
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.ops.reduce import spec as R

ort = pytest.importorskip("onnxruntime")


def run_ort(model, inputs):
    sess = ort.InferenceSession(model.onnx.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


def _check(widened):
    """Each node of the exposed graph judged on ORT's own values (the campaign's local check)."""
    from nnfuzz.triage.localize import local_check
    from nnfuzz.verdict import DEFAULT_TOLERANCES as TOL

    gir = chain(E.Sin(), R.ArgMax(0, keepdims=True), shape=(2,), dtype=DType.float16)
    x = {"x": np.array([1.076, 1.077], np.float16)}
    check = local_check(gir, {}, x, run_ort, TOL, True, None, widened)
    assert check.got["v0"][0] == check.got["v0"][1] and check.got["v1"][0] == 1, check.got  # a tie; ORT picks 1
    return check.local


def test_a_float16_tie_read_unrounded_is_within_budget_under_orts_allowance():
    from nnfuzz.triage.repro import widened_of

    assert widened_of("ort-cpu") == ("float16",)
    local = _check(widened_of("ort-cpu"))
    assert local.root is None and not local.skipped, local


def test_without_the_allowance_the_argmax_is_charged():
    local = _check(())
    assert local.root is not None and (local.root.op, local.root.kind) == ("ArgMax", "values"), local
