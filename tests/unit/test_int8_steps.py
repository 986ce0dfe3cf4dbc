"""The int8 oracle's arithmetic (nnfuzz/oracles/int8_steps.py) and its configuration, without TFLite: TFLite's
quantize/dequantize, the comparison in output steps (a step off at a tie passes, two steps fail), and the
ConfigErrors of a campaign that cannot be judged this way."""
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from nnfuzz.errors import ConfigError
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.oracles.int8_steps import Q, compare_steps, dequantize, quantize, quantized_inputs, split_record
from nnfuzz.ops.elementwise.spec import Relu

from graphs import chain


def test_quantize_rounds_half_away_from_zero_and_saturates():
    # TFLite's AffineQuantize: std::round, then the zero point, then int8's range
    x = np.array([0.25, -0.25, 0.75, 0.2, 100.0, -100.0], np.float32)
    assert quantize(x, 0.5, 3).tolist() == [4, 2, 5, 3, 127, -128]
    assert quantize(np.array([1.0, -1.0]), 0.001, 0, bits=32).tolist() == [1000, -1000]


def test_dequantize_is_float32_per_tensor_and_per_channel():
    q = np.array([[-128, 0, 127], [1, 2, 3]], np.int8)
    got = dequantize(q, 0.1, -1)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.float32(0.1 * (q.astype(np.float64) + 1)))
    per_row = dequantize(q, np.array([1.0, 2.0]), np.array([0, 1]), axis=0)
    assert per_row.tolist() == [[-128.0, 0.0, 127.0], [0.0, 2.0, 4.0]]


def _relu_record():
    gir = chain(Relu(), shape=(6,))
    record = {Q + "x": np.array([0.05, -3.0]), Q + "v0": np.array([0.1, -128.0]), "int8:ops": np.array(["RELU"])}
    x = np.array([-0.2, 0.0, 0.1, 0.15, 3.0, 7.0], np.float32)
    return gir, record, quantized_inputs(record, gir, {"x": x})


def test_the_quantized_reference_passes_and_a_step_beyond_the_allowance_fails():
    gir, record, q = _relu_record()
    # relu of DQ(q) on the output grid (scale 0.1, zero point -128); the input 7.0 saturates at 127 (6.5)
    want = np.array([-128, -128, -127, -126, -98, -63], np.int8)
    assert compare_steps(gir, {}, record, q, {"v0": want}).label == "pass"
    one_off = want.copy()
    one_off[4] += 1   # one step from the reference: a requantization's rounding
    assert compare_steps(gir, {}, record, q, {"v0": one_off}).label == "pass"
    two_off = want.copy()
    two_off[4] += 2
    v = compare_steps(gir, {}, record, q, {"v0": two_off})
    assert v.label == "inconsistency" and "1/6 int8 values more than 1 step" in v.summary, v.summary
    assert v.errors["v0"]["max_steps"] == 2.0


def test_a_value_at_a_half_step_may_round_either_way():
    # 0.15 (float32 0.15000000596) in steps of 0.1 rounds to 2 steps; its float32 neighbour below to 1: both are
    # the reference, so neither is a step off
    gir, record, q = _relu_record()
    want = np.array([-128, -128, -127, -126, -98, -63], np.int8)
    for tie in (-127, -126):
        want[3] = tie
        assert compare_steps(gir, {}, record, q, {"v0": want}).errors["v0"]["max_steps"] == 0.0
    want[3] = -125
    assert compare_steps(gir, {}, record, q, {"v0": want}).errors["v0"]["max_steps"] == 1.0


def test_split_record_keeps_the_outputs_apart():
    outs, rec = split_record({"v0": np.zeros(2), Q + "v0": np.array([1.0, 0.0]), "int8:scope": np.array(["x"])})
    assert list(outs) == ["v0"] and set(rec) == {Q + "v0", "int8:scope"}


def _config(**policy):
    from nnfuzz.fuzz.campaign import CampaignConfig

    return CampaignConfig(backend="tflite-cpu", backend_options={"quantize": "int8"},
                          policy=GenPolicy(**policy), time_s=1, out=Path("/nonexistent"))


def test_int8_campaigns_take_single_op_float32_graphs_only():
    from nnfuzz.oracles.base import campaign_oracles

    (oracle,) = campaign_oracles(_config(max_nodes=1, dtypes=["float32"]))
    assert oracle.name == "int8" and oracle.expected_system is None
    with pytest.raises(ConfigError, match=r"mgen.max_nodes=1 \(it is 4\)"):
        campaign_oracles(_config(max_nodes=4, dtypes=["float32"]))
    with pytest.raises(ConfigError, match=r"mgen.dtypes=\[float32\]"):
        campaign_oracles(_config(max_nodes=1, dtypes=["float32", "int64"]))
    with pytest.raises(ConfigError, match="oracle=optlevel cannot test it"):
        campaign_oracles(dataclasses.replace(_config(max_nodes=1, dtypes=["float32"]), oracle="optlevel"))


def test_the_quantize_option_is_checked_and_caches_its_probe_apart():
    from nnfuzz.backends.tflite import TfliteBackend

    assert TfliteBackend.probe_variant({"quantize": "int8"}) == "quantize=int8"
    assert TfliteBackend.probe_variant({}) == "" and TfliteBackend.oracle_for({}) is None
    assert TfliteBackend.dynamic_forms_for({"quantize": "int8"}) == ()
    with pytest.raises(ConfigError, match=r"backend.options.quantize='int4'; valid choices: \['none', 'int8'\]"):
        TfliteBackend.choice("quantize", "int4", ("none", "int8"))


def test_a_quantized_filter_is_matched_to_its_weight_across_layouts():
    # a Conv2d weight [O, I, kh, kw] as TFLite holds it: OHWI, int8 symmetric per output channel (axis 0)
    from nnfuzz.backends.tflite_int8 import _match

    rng = np.random.default_rng(0)
    w = rng.normal(size=(3, 2, 2, 4)).astype(np.float32)
    ohwi = w.transpose(0, 2, 3, 1)
    scales = np.abs(ohwi).reshape(3, -1).max(axis=1) / 127
    q = quantize(ohwi, scales.reshape(3, 1, 1, 1), 0).astype(np.int8)
    other = rng.normal(size=w.shape).astype(np.float32)
    name, held = _match(q, scales, np.zeros(3, np.int64), 0, {"other": other, "w0": w})
    assert name == "w0" and held.shape == w.shape
    np.testing.assert_allclose(held, w, atol=scales.max() / 2 + 1e-7)  # within half a step of each channel
    np.testing.assert_array_equal(held, dequantize(q, scales, np.zeros(3), axis=0).transpose(0, 3, 1, 2))
    assert _match(q, scales, np.zeros(3, np.int64), 0, {"other": other}) is None
