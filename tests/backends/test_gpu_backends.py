"""ort-gpu, inductor-gpu, trt-gpu, tvm-gpu. Without a GPU (or the GPU packages) each must refuse to start with a
BackendUnavailable that says what is missing and what to use instead; with them, generated models agree
with torch eager. Each test skips where the other case holds."""
import numpy as np
import pytest
from single_op import COMMON_OPS, onnx_model, safe_model

from nnfuzz.backends import backend_class, get_backend
from nnfuzz.backends.base import BackendUnavailable
from nnfuzz.backends.known import classify
from nnfuzz.fuzz.sandbox import Sandbox
from nnfuzz.verdict import Outcome, compare
from nnfuzz.fuzz.runlog import read_log

OPS = COMMON_OPS

# backend -> words its "unavailable" message must contain (what is missing, what to use instead)
HINTS = {
    "ort-gpu": ["CUDAExecutionProvider", "onnxruntime-gpu", "ort-cpu"],
    "inductor-gpu": ["torch.cuda.is_available()", "inductor-cpu"],
    "trt-gpu": ["ort-cpu"],
    "tvm-gpu": ["tvm.cuda().exist is False", "tvm-cpu"],
}


def unavailable(name):
    """The BackendUnavailable message of backend ``name`` on this machine, or None if it can run."""
    try:
        backend_class(name).check_available()
    except BackendUnavailable as e:
        return str(e)
    return None


def needs(name):
    why = unavailable(name)
    if why is not None:
        pytest.skip(f"{name} cannot run here: {why}")


def make_model(seed, include=OPS, dtypes=("float32",), max_nodes=5):
    """Canonical ONNX spellings: these tests check the GPU code paths, and a random spelling can meet a
    frontend bug already kept in bugs/kept/ (TVM's computed Reshape, bugs/kept/0007) that has nothing to do with them."""
    from nnfuzz.materialize.onnx.spec import ExportSpec

    return safe_model(seed, include, dtypes, max_nodes, export=ExportSpec(spelling="canonical", seed=seed))



# -- no GPU ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(HINTS))
def test_unavailable_backend_says_what_is_missing(name):
    why = unavailable(name)
    if why is None:
        pytest.skip(f"{name} can run here")
    assert why.startswith(name), why
    for word in HINTS[name]:
        assert word in why, f"{word!r} missing from: {why}"
    with pytest.raises(BackendUnavailable):
        get_backend(name)


def test_trt_names_every_missing_piece():
    why = unavailable("trt-gpu")
    if why is None:
        pytest.skip("trt-gpu can run here")
    import importlib.util

    import torch

    if importlib.util.find_spec("tensorrt") is None:
        assert "pip install tensorrt" in why
    if not torch.cuda.is_available():
        assert "torch.cuda.is_available() is False" in why


@pytest.mark.slow
def test_unavailable_in_the_sandbox_is_reported_at_start():
    if unavailable("ort-gpu") is None:
        pytest.skip("ort-gpu can run here")
    with pytest.raises(BackendUnavailable, match="onnxruntime-gpu"):
        Sandbox("ort-gpu").start()


# -- with a GPU ------------------------------------------------------------------------------------


@pytest.mark.slow  # on a GPU machine: compiles, and starts sandbox workers
@pytest.mark.parametrize("name", ["ort-gpu", "trt-gpu", "tvm-gpu"])
def test_onnx_gpu_backend_passes_generated_float32_models(name):
    needs(name)
    b = get_backend(name)
    assert b.version and b.version_id
    for seed in range(3):
        model = make_model(seed)
        out = b.run(b.compile(model.onnx.SerializeToString()), model.oracle.input)
        v = compare(model.oracle.output, out)
        assert v.outcome is Outcome.PASS, (seed, v.detail)


@pytest.mark.slow  # on a GPU machine: compiles, and starts sandbox workers
def test_inductor_gpu_passes_generated_float32_models():
    needs("inductor-gpu")
    from nnfuzz.materialize.portable import pack

    b = get_backend("inductor-gpu")
    for seed in range(2):
        model = make_model(seed, max_nodes=4)
        out = b.run(b.compile(pack(model.gir.dumps(), model.weights)), model.oracle.input)
        v = compare(model.oracle.output, out)
        assert v.outcome is Outcome.PASS, (seed, v.detail)


@pytest.mark.slow  # on a GPU machine: compiles, and starts sandbox workers
def test_ort_gpu_session_really_uses_cuda():
    needs("ort-gpu")
    b = get_backend("ort-gpu")
    from onnx import TensorProto

    f = TensorProto.FLOAT
    sess = b.compile(onnx_model("Relu", [("x", f, [3])], [("y", f, [3])]))
    assert sess.get_providers()[0] == "CUDAExecutionProvider"
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    np.testing.assert_array_equal(b.run(sess, {"x": x})["y"], np.maximum(x, 0))


@pytest.mark.slow  # on a GPU machine: compiles, and starts sandbox workers
def test_trt_edge_tensors_and_known_limitations():
    """0-d and empty tensors run; float64 and ops the parser lacks are UNSUPPORTED, never bugs."""
    needs("trt-gpu")
    from onnx import TensorProto

    b = get_backend("trt-gpu")
    f = TensorProto.FLOAT
    out = b.run(b.compile(onnx_model("Add", [("x", f, []), ("z", f, [])], [("y", f, [])])),
                {"x": np.array(1.5, np.float32), "z": np.array(2.0, np.float32)})
    assert out["y"].shape == () and out["y"] == 3.5
    out = b.run(b.compile(onnx_model("Relu", [("x", f, [0, 3])], [("y", f, [0, 3])])),
                {"x": np.zeros((0, 3), np.float32)})
    assert out["y"].shape == (0, 3)
    d = TensorProto.DOUBLE
    with pytest.raises(RuntimeError) as e:
        b.compile(onnx_model("Exp", [("x", d, [2])], [("y", d, [2])]))
    assert classify("trt", str(e.value)).dtype == "float64"
    with pytest.raises(RuntimeError) as e:  # no importer and no plugin for an op that does not exist
        b.compile(onnx_model("Frobnicate", [("x", f, [2])], [("y", f, [2])]))
    k = classify("trt", str(e.value))
    assert k is not None and k.kind == "unsupported", str(e.value)


@pytest.mark.slow  # on a GPU machine: compiles, and starts sandbox workers
def test_tvm_gpu_runs_on_the_gpu_and_agrees_with_tvm_cpu():
    """The same model compiled for CUDA and for LLVM: the CUDA module's tensors live on the GPU."""
    needs("tvm-gpu")
    gpu, cpu = get_backend("tvm-gpu"), get_backend("tvm-cpu")
    model = make_model(7)
    data = model.onnx.SerializeToString()
    compiled = gpu.compile(data)
    assert compiled[0] is not None and gpu.device_handle().dlpack_device_type() == 2  # kDLCUDA
    got, want = gpu.run(compiled, model.oracle.input), cpu.run(cpu.compile(data), model.oracle.input)
    v = compare(want, got)
    assert v.outcome is Outcome.PASS, v.detail


@pytest.mark.slow  # on a GPU machine: compiles, and starts sandbox workers
@pytest.mark.parametrize("backend", ["ort-cpu", "tvm-cpu"])
def test_devices_oracle_campaign_compares_cpu_with_gpu(backend, tmp_path, monkeypatch, capsys):
    """oracle=devices: a short campaign where the GPU twin really runs (tests counted, nnfuzz raises nothing)."""
    import json

    from nnfuzz.cli import main

    needs(backend.replace("-cpu", "-gpu"))
    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "bugs"
    # no probe (what is under test is the twin run, and probing tvm's op x dtype rows on two targets would
    # take the whole budget) and small graphs (tvm compiles each model twice)
    assert main(["fuzz", "--json", f"backend={backend}", "oracle=devices", "time=60s", f"fuzz.out={out}", "ui=plain",
                 "fuzz.producers=0", "fuzz.probe=false", "mgen.max_nodes=4"]) == 0
    s = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert s["tests"] > 0 and s["nnfuzz_errors"] == 0, s
    log = list(read_log(out))
    assert any(r.get("verdict") == "pass" for r in log), "no test passed on both devices"


@pytest.mark.slow  # on a GPU machine: compiles, and starts sandbox workers
def test_inductor_gpu_campaign_with_forked_producers_makes_no_nnfuzz_errors(tmp_path, capsys):
    """Producers are forked after a warm-up that ran a backward pass; on a CUDA build of torch with a GPU
    visible, every forked producer's value search failed (autograd's device threads do not survive a fork)."""
    import json

    from nnfuzz.cli import main

    needs("inductor-gpu")
    out = tmp_path / "bugs"
    assert main(["fuzz", "--json", "backend=inductor-gpu", "time=60s", f"fuzz.out={out}", "ui=plain", "fuzz.producers=2",
                 "fuzz.probe=false", "mgen.max_nodes=4"]) == 0
    s = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert s["tests"] > 0 and s["nnfuzz_errors"] == 0, s


@pytest.mark.slow  # on a GPU machine: compiles, and starts sandbox workers
def test_ort_gpu_op_without_any_kernel_is_unsupported():
    """float64 Tan has neither a CUDA nor a CPU kernel: the CUDA session's error is a known limitation."""
    needs("ort-gpu")
    from onnx import TensorProto

    b = get_backend("ort-gpu")
    d = TensorProto.DOUBLE
    with pytest.raises(Exception) as e:
        b.compile(onnx_model("Tan", [("x", d, [2])], [("y", d, [2])], opset=22))
    k = classify("ort", str(e.value))
    assert k is not None and k.kind == "unsupported", str(e.value)


# -- dynamic shapes and gradients on the GPU (docs/dynamic-shapes.md, docs/gradients.md) ---------------


@pytest.mark.slow  # on a GPU machine: compiles, and starts sandbox workers
@pytest.mark.parametrize("name", ["inductor-gpu", "tvm-gpu"])
def test_gpu_dynamic_model_runs_every_shape_with_one_compile(name):
    """The CPU systems' dynamic bar on the GPU twins: one compile (torch.compile on CUDA, a Relax module
    built for the cuda target) runs the model at its three shapes, each matching torch eager."""
    from graphs import dynamic_graph, dynamic_payload
    from nnfuzz.materialize.dynamic import build_dynamic
    from nnfuzz.materialize.onnx.spec import ExportSpec

    needs(name)
    b = build_dynamic(dynamic_graph(), 7, export=ExportSpec(seed=7, opset=17, spelling="canonical"))
    data = dynamic_payload(b, "onnx" if name == "tvm-gpu" else "gir")
    with Sandbox(name, test_timeout=300) as sb:
        res = sb.run(data, [s.input for s in b.shapes])
    assert res.ok, res.error
    assert res.compiles == 1 and len(res.shapes) == 3
    for got, ref in zip(res.shapes, b.shapes):
        np.testing.assert_allclose(got["v1"], ref.output["v1"], rtol=1e-5, atol=1e-6)


@pytest.mark.slow  # on a GPU machine: compiles, and starts sandbox workers
def test_inductor_gpu_compiled_backward_matches_eager():
    """oracle=grad's run on CUDA: the compiled forward and backward of one graph agree with torch eager's
    outputs and input gradient (the default tolerances), and the gradient is not all zero."""
    from graphs import chain
    from nnfuzz.backends.inductor import InductorGpuBackend
    from nnfuzz.materialize.portable import pack
    from nnfuzz.materialize.torch.grad import eager
    from nnfuzz.ops.elementwise.spec import Sigmoid, Tanh

    needs("inductor-gpu")
    gir = chain(Tanh(), Sigmoid(), shape=(3, 4))
    x = {"x": np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)}
    spec, upstream, expected = eager(gir, {}, x, seed=5)
    backend = InductorGpuBackend()
    got = backend.run(backend.compile(pack(gir.dumps(), {}, None, spec.to_json())), {**x, **upstream})
    assert set(got) == {"v1", "grad:x"}
    v = compare(expected, got)
    assert not v.is_bug, v.detail
    assert not np.allclose(got["grad:x"], 0)

