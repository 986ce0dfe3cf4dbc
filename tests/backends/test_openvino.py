"""openvino-cpu, the real system: generated float32 models agree with torch eager; options, versions,
known limitations (what OpenVINO says it cannot do is UNSUPPORTED, never a bug); one run in the sandbox.
The generated models run in a contained worker (tests/contained.py): a native crash of OpenVINO fails one
test, not the run."""
import functools
import importlib.metadata

import ml_dtypes
import numpy as np
import pytest
from contained import contained  # noqa: F401 - the fixture
from single_op import COMMON_OPS, onnx_model, safe_model

pytest.importorskip("openvino")

from nnfuzz.backends import get_backend  # noqa: E402
from nnfuzz.backends.known import classify  # noqa: E402
from nnfuzz.errors import ConfigError  # noqa: E402
from nnfuzz.fuzz.sandbox import Sandbox  # noqa: E402
from nnfuzz.verdict import Outcome, Symptom, compare, judge  # noqa: E402

OPS = COMMON_OPS


def make_model(seed, include=OPS, dtypes=("float32",), max_nodes=6):
    return safe_model(seed, include, dtypes, max_nodes)



@pytest.fixture(scope="module")
def ov():
    return get_backend("openvino-cpu")


@functools.cache
def worker_backend():
    """The contained worker's one backend."""
    return get_backend("openvino-cpu")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.slow
def test_generated_float32_models_pass(contained, seed):
    contained(generated_float32_model_passes, seed)


def generated_float32_model_passes(seed):
    ov = worker_backend()
    model = make_model(seed)
    out = ov.run(ov.compile(model.onnx.SerializeToString()), model.oracle.input)
    v = compare(model.oracle.output, out)
    assert v.outcome is Outcome.PASS, v.detail


def test_bfloat16_and_scalar_inputs_round_trip(ov):
    """numpy has no bfloat16: the backend hands OpenVINO the raw bits (ml_dtypes arrays given as they are
    come out wrong), and 0-d inputs stay 0-d (np.ascontiguousarray would make them [1])."""
    from onnx import TensorProto

    bf = TensorProto.BFLOAT16
    model = onnx_model("Mul", [("x", bf, [3]), ("s", bf, [])], [("y", bf, [3])])
    x = np.array([1.5, -2.25, 3.0], ml_dtypes.bfloat16)
    s = np.array(-2.0, ml_dtypes.bfloat16)
    out = ov.run(ov.compile(model), {"x": x, "s": s})
    assert out["y"].dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(out["y"].astype(np.float32), [-3.0, 4.5, -6.0])


def test_precision_is_pinned_to_float32_by_default(ov):
    """Unpinned, the CPU plugin runs float32 models in bfloat16 on CPUs that have it."""
    assert ov.config["INFERENCE_PRECISION_HINT"] == "f32"
    from onnx import TensorProto

    cm, _ = ov.compile(onnx_model("Relu", [("x", TensorProto.FLOAT, [2])], [("y", TensorProto.FLOAT, [2])]))
    assert str(cm.get_property("INFERENCE_PRECISION_HINT")) in ("<Type: 'float32'>", "f32")
    assert get_backend("openvino-cpu", precision="bf16").config["INFERENCE_PRECISION_HINT"] == "bf16"


def test_bad_option_value_names_the_value_and_choices():
    with pytest.raises(ConfigError, match=r"backend\.options\.precision='f64'.*\['f32', 'bf16', 'f16'\]"):
        get_backend("openvino-cpu", precision="f64")


def test_version(ov):
    assert ov.version == importlib.metadata.version("openvino")
    assert ov.version_id.startswith(ov.version) and len(ov.version_id) > len(ov.version)


def _error(ov, model_bytes, inputs=None) -> str:
    with pytest.raises(RuntimeError) as e:
        ov.run(ov.compile(model_bytes), inputs or {})
    return str(e.value)


def test_op_without_a_conversion_rule_is_unsupported(ov):
    from onnx import TensorProto

    text = _error(ov, onnx_model("Det", [("x", TensorProto.FLOAT, [3, 3])], [("y", TensorProto.FLOAT, [])]))
    assert "No conversion rule found for operations: Det" in text
    k = classify("openvino", text)
    assert k is not None and k.kind == "unsupported"


def test_dtype_the_frontend_rejects_is_unsupported(ov):
    from onnx import TensorProto

    i16 = TensorProto.INT16
    text = _error(ov, onnx_model("ReduceProd", [("x", i16, [4, 3])], [("y", i16, None)], axes=[1]))
    assert "Unsupported input type i16" in text
    assert classify("openvino", text).kind == "unsupported"


def test_float64_models_are_refused_as_unsupported(ov):
    """The CPU plugin computes float64 in float32: its results cannot meet float64 tolerances."""
    from onnx import TensorProto

    f64 = TensorProto.DOUBLE
    text = _error(ov, onnx_model("Exp", [("x", f64, [2])], [("y", f64, [2])]))
    k = classify("openvino", text)
    assert k is not None and k.kind == "unsupported" and k.dtype == "float64"


def test_float32_model_with_float64_constants_runs(ov):
    """torch's exporter puts float64 constants and casts into float32 graphs (Clip's bounds): those run."""
    from nnfuzz.materialize.onnx.export import to_onnx
    from nnfuzz.materialize.onnx.spec import ExportSpec

    model = make_model(0, include=["Clip", "Relu", "Add"], max_nodes=3)
    model.onnx, _, _ = to_onnx(model.gir, model.weights, model.module, model.torch_inputs,
                               ExportSpec(via="torch", opset=17))
    graph = ov.core.read_model(model.onnx.SerializeToString())
    assert any(op.get_output_element_type(0) == ov._ov.Type.f64 for op in graph.get_ordered_ops()
               if op.get_output_size())
    out = ov.run(ov.compile(model.onnx.SerializeToString()), model.oracle.input)
    assert compare(model.oracle.output, out).outcome is Outcome.PASS


@pytest.mark.slow
def test_wrong_shape_is_a_bug_not_unsupported():
    """OpenVINO 2026.4's ONNX frontend ignores ReduceL1's ``axes`` attribute (opsets < 18) and reduces
    every axis, the first real bug this backend found. Whatever the installed version does, a wrong
    result must be judged a bug (or pass once fixed), never explained away as a known limitation."""
    from onnx import TensorProto

    f = TensorProto.FLOAT
    model = onnx_model("ReduceL1", [("x", f, [4, 3, 2])], [("y", f, None)], axes=[0], keepdims=1)
    x = np.arange(24, dtype=np.float32).reshape(4, 3, 2) - 10
    ref = {"y": np.abs(x).sum(axis=0, keepdims=True)}
    with Sandbox("openvino-cpu") as sb:
        r = sb.run(model, {"x": x})
    v = judge(r, ref, "openvino")
    assert v.outcome is Outcome.PASS or (v.outcome is Outcome.BUG and v.symptom is Symptom.inconsistency), v


@pytest.mark.slow
def test_generated_model_in_the_sandbox():
    model = make_model(3)
    with Sandbox("openvino-cpu") as sb:
        assert sb.info["name"] == "openvino-cpu" and sb.info["version"] == importlib.metadata.version("openvino")
        r = sb.run(model.onnx.SerializeToString(), model.oracle.input)
    assert r.status == "ok", (r.error, r.detail)
    assert judge(r, model.oracle.output, "openvino").outcome is Outcome.PASS


def test_newer_attribute_values_the_frontend_lacks_are_unsupported(ov):
    """Resize-18's half_pixel_symmetric and Pad-19's wrap mode: OpenVINO says it does not take them."""
    from onnx import TensorProto, helper, numpy_helper

    f = TensorProto.FLOAT
    scales = numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "scales")
    g = helper.make_graph([helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear",
                                            coordinate_transformation_mode="half_pixel_symmetric")], "r",
                          [helper.make_tensor_value_info("x", f, [2, 3])], [helper.make_tensor_value_info("y", f, [2, 6])],
                          [scales])
    resize = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=9).SerializeToString()
    pads = numpy_helper.from_array(np.array([0, 1, 0, 1], np.int64), "pads")
    g = helper.make_graph([helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap")], "p",
                          [helper.make_tensor_value_info("x", f, [2, 3])], [helper.make_tensor_value_info("y", f, [2, 5])],
                          [pads])
    pad = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=9).SerializeToString()
    for model, words in ((resize, "coordinate transformation mode is not supported"), (pad, "Unsupported padding mode")):
        text = _error(ov, model, {"x": np.ones((2, 3), np.float32)})
        assert words in text
        assert classify("openvino", text).kind == "unsupported"


@pytest.mark.parametrize("text", [
    "Not Implemented:\nDoesn't support dynamic shapes for 'weights' and 'output_shape' inputs",
    "Unexpected: CPU plug-in doesn't support Squeeze operation with dynamic rank. Operation name: Squeeze_4",
    "data_shape[0].is_static() lp_pool.cpp: First dimension of input data must be static",
    "lp_pool.cpp: Channel dimension of input data must be static",
])
def test_a_symbolic_dim_the_cpu_plugin_refuses_in_its_own_words_is_unsupported(text):
    """Seen in a 90 s fuzz.dynamic=1 openvino-cpu campaign (issue 27): refusals, not faults."""
    assert classify("openvino", text).kind == "unsupported"
    assert classify("openvino", "Dimension of data input shape must be evenly divisible") is None
