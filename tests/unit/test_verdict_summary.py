"""An inconsistency's summary says how many values are NaN/inf on one side only: its max abs and rel errors
count finite pairs alone, and a NaN gradient against a finite one read "max abs 0" (an inductor-gpu
campaign's oracle=grad folder)."""
import numpy as np

from nnfuzz.verdict import compare


def test_nan_where_the_reference_is_finite_is_counted_in_the_summary():
    v = compare({"grad:x": np.ones(4, np.float32)}, {"grad:x": np.array([np.nan, np.inf, 1, 1], np.float32)})
    assert v.is_bug
    assert v.summary.startswith("grad:x: 2/4 values off (2 NaN/inf where the reference is finite; finite pairs: max abs 0")


def test_a_finite_value_where_the_reference_is_nan_is_counted_the_other_way():
    v = compare({"y": np.array([np.nan, 1], np.float32)}, {"y": np.array([2, 1], np.float32)})
    assert "1 finite where the reference is NaN/inf" in v.summary


def test_finite_errors_alone_keep_the_short_summary():
    v = compare({"y": np.ones(3, np.float32)}, {"y": np.array([1, 1, 5], np.float32)})
    assert v.summary == "y: 1/3 values off (max abs 4, max rel 4; rtol 0.001, atol 0.0001)"
