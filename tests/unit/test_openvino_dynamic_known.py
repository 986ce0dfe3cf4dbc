"""A symbolic dim OpenVINO's CPU plugin or ONNX frontend refuses in its own words is a known limitation;
its internal checks failing on a valid dynamic model are not.

The texts are err.log files of bug folders a 90 s openvino-cpu campaign (OpenVINO 2026.4.1,
``fuzz.dynamic=1``) saved (tests/cases/openvino-dynamic-errors/, judged in docs/dynamic-findings.md):
classify() runs on them as the verdict does.
"""
from pathlib import Path

import pytest

from nnfuzz.backends.known import classify

CASES = Path(__file__).parents[1] / "cases" / "openvino-dynamic-errors"


@pytest.mark.parametrize("log", [
    "convtranspose-dynamic-weights.log",  # "Doesn't support dynamic shapes for 'weights' and 'output_shape'"
    "conv-dynamic-weights.log",           # "Doesn't support dynamic weights shape" (conv.cpp)
    "squeeze-dynamic-rank.log",           # "doesn't support Squeeze operation with dynamic rank"
    "globallppool-channel.log",           # "Channel dimension of input data must be static"
    "globallppool-first.log",             # "First dimension of input data must be static"
    "groupnorm-dynamic.log",              # "Unsupported operation of type: GroupNormalization" (a 30-min run)
])
def test_a_symbolic_dim_refused_in_openvinos_words_is_unsupported(log):
    k = classify("openvino", (CASES / log).read_text())
    assert k is not None and k.kind == "unsupported", log
    assert "dynamic model" in k.note


@pytest.mark.parametrize("log", [
    "slice-of-reduce-scalar.log",          # a reduce given shape [] (bugs/kept/0011), then Slice fails
    "pad-of-reduce-scalar.log",            # the same, then Pad fails
    "qlinearconv-weight-scale-axis.log",   # a per-output-channel w_scale checked against W's axis 1
])
def test_a_failed_internal_check_stays_a_bug(log):
    assert classify("openvino", (CASES / log).read_text()) is None, log


def test_the_entry_needs_openvinos_words():
    """Not any 'dynamic': an unrelated 'Not Implemented' or shape check is no refusal of a symbolic dim."""
    assert classify("openvino", "Not Implemented:\nCannot fallback on ngraph reference implementation.") is None
    assert classify("openvino", "Doesn't support static weights shape") is None
