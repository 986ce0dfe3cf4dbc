"""A saved bug of every CPU backend replays through `nnfuzz repro` on the real system: a bug folder in
the backend's model format (model.onnx, or model.gir plus the model/ SavedModel for TF systems) whose
recorded outputs are off by one reproduces (exit 0); with the true outputs it does not (exit 1). The
SavedModel check runs TF in a contained worker (tests/contained.py): a native crash fails one test."""
import importlib.util
import json

import numpy as np
import pytest
from contained import contained  # noqa: F401 - the fixture

from nnfuzz.backends.registry import backend_class
from nnfuzz.cli import main
from nnfuzz.generate import GenPolicy, generate_graph
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.portable import model_payload
from nnfuzz.triage.bugstore import BugStore, load_bug
from nnfuzz.triage.meta import BugMeta
from nnfuzz.verdict import compare

NEEDS = {"ort-cpu": "onnxruntime", "tvm-cpu": "tvm", "openvino-cpu": "openvino", "inductor-cpu": "torch",
         "tf-cpu": "tensorflow", "xla-cpu": "tensorflow", "tflite-cpu": "ai_edge_litert"}
OPS = ["Relu", "Add", "Mul", "Sigmoid", "MatMul", "Conv2d", "ReduceSum"]


def _bug(tmp_path, backend, *, corrupt):
    cls = backend_class(backend)
    fmt = "onnx" if "onnx" in cls.formats else "gir"
    gir = generate_graph(GenPolicy(max_nodes=5, dtypes=["float32"], include=OPS), seed=7)
    model = build_model(gir, 7)
    oracle = model.oracle.to_dict()
    if corrupt:
        oracle["output"] = {k: v + 1 for k, v in oracle["output"].items()}
        oracle["output_f64"] = oracle["output_f64_jitter"] = None
    # as a campaign records it (localization finds no divergent node: the system agrees with torch)
    summary = compare(oracle["output"], model.oracle.output).summary if corrupt else "test bug"
    meta = BugMeta(system=backend, version="x", symptom="inconsistency", version_id="x", stage="verify",
                   summary=summary, format=fmt)
    tf_model = None
    if cls.lowering == "tf":
        from nnfuzz.materialize.tensorflow.module import saved_model_writer

        tf_model = saved_model_writer(gir.dumps(), model.weights)
    path = BugStore(tmp_path / "bugs").save(model_bytes=model_payload(gir, model.weights, model.onnx, fmt),
                                            gir_text=gir.dumps(), oracle=oracle, meta=meta, err_log="test",
                                            tf_model=tf_model)
    return path, model


@pytest.mark.parametrize("backend", sorted(NEEDS))
@pytest.mark.slow
def test_saved_bug_replays_on_the_real_system(contained, backend, tmp_path, capsys):
    if importlib.util.find_spec(NEEDS[backend]) is None:
        pytest.skip(f"{NEEDS[backend]} is not installed")
    bad, model = _bug(tmp_path, backend, corrupt=True)
    bug = load_bug(bad)
    assert bug.format == ("onnx" if "onnx" in backend_class(backend).formats else "gir")
    assert main(["repro", "--json", str(bad)]) == 0
    out = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert out["reproduces"] is True and out["backend"] == backend
    good, _ = _bug(tmp_path, backend, corrupt=False)
    assert main(["repro", str(good)]) == 1, "the true outputs must not reproduce an inconsistency"
    if backend_class(backend).lowering == "tf":  # the SavedModel computes what TF eager computes
        contained(saved_model_computes, str(bad / "model"), bug.oracle["input"], model.oracle.output)


def saved_model_computes(model_dir, inputs, want):
    import tensorflow as tf

    fn = tf.saved_model.load(model_dir).signatures["serving_default"]
    got = fn(**{k: tf.constant(v) for k, v in inputs.items()})
    outs = sorted(got.values(), key=lambda t: t.name if hasattr(t, "name") else "")
    for name, w in want.items():
        assert any(o.shape == w.shape and np.allclose(o.numpy(), w, rtol=1e-3, atol=1e-4) for o in outs), name


@pytest.mark.slow
def test_a_bug_replays_on_a_system_of_the_other_format(tmp_path):
    """An ORT bug (model.onnx) replayed on xla-cpu (GraphIR payload) and back: the formats convert."""
    pytest.importorskip("tensorflow")
    pytest.importorskip("onnxruntime")
    bad, _ = _bug(tmp_path, "ort-cpu", corrupt=True)
    assert main(["repro", str(bad), "backend=xla-cpu"]) == 0
    tf_bad, _ = _bug(tmp_path, "xla-cpu", corrupt=True)
    assert main(["repro", str(tf_bad), "backend=ort-cpu"]) == 0
