"""A float64 normalization is written with float64 statistics (stash_type=DOUBLE), as torch computes it.

The case ``tests/cases/ort-gpu-layernorm-f64-stash/`` is a false alarm an ort-gpu campaign saved on an
H100: a float64 LayerNormalization written with stash_type=1 (float32 statistics). ORT's CUDA kernel for
it is registered as T=double, U=float (onnxruntime/core/providers/cuda/nn/layer_norm.cc), so it did what
the model said and was 3e-7 off the float64 reference; ORT's CPU kernel computes in double whatever the
stash_type. Re-exported now, the same graph asks for float64 statistics.
"""
from pathlib import Path

import onnx
import pytest

from nnfuzz.gir import GraphIR
from nnfuzz.materialize.model import build_model
from nnfuzz.triage.bugstore import bug_weights, load_bug

CASE = Path(__file__).parents[1] / "cases" / "ort-gpu-layernorm-f64-stash"


def _stash_types(model_proto) -> set:
    return {a.i for n in model_proto.graph.node if n.op_type == "LayerNormalization"
            for a in n.attribute if a.name == "stash_type"}


def test_the_saved_model_asked_for_float32_statistics():
    bug = load_bug(CASE)
    assert bug.meta.first_divergent_node["dtype"] == "float64"
    assert _stash_types(onnx.load_from_string(bug.model_bytes)) == {1}


def test_re_exported_it_asks_for_float64_statistics():
    bug = load_bug(CASE)
    gir = GraphIR.loads(bug.gir_text)
    model = build_model(gir, 0, export=bug.meta.export_spec(), values=(bug_weights(bug), dict(bug.oracle["input"])))
    assert _stash_types(model.onnx) == {onnx.TensorProto.DOUBLE}


def test_float64_stash_runs_on_ort_cpu_in_double():
    """ORT accepts stash_type=DOUBLE (on the CPU; the CUDA provider has no U=double kernel and leaves the
    node to the CPU), and the result is the float64 one."""
    ort = pytest.importorskip("onnxruntime")
    import numpy as np
    from onnx import TensorProto as T, helper

    x = np.random.default_rng(0).normal(1e3, 1e-2, (4, 8))
    g = helper.make_graph([helper.make_node("LayerNormalization", ["x", "w"], ["y"], axis=-1, epsilon=1e-3,
                                            stash_type=T.DOUBLE)], "g",
                          [helper.make_tensor_value_info("x", T.DOUBLE, [4, 8])],
                          [helper.make_tensor_value_info("y", T.DOUBLE, [4, 8])],
                          [onnx.numpy_helper.from_array(np.ones(8), "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m, full_check=True)
    y = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    want = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-8)
