"""Systems' own 'no kernel' or 'not implemented' answers are known limitations; their crashes on valid
models are not.

The texts are err.log files of bug folders that the H100 campaigns saved (tests/cases/gpu-errors/, see
docs/gpu-findings.md) and CPU campaigns saved (tests/cases/cpu-errors/): classify() runs on them as the
verdict does (no GPU needed).
"""
from pathlib import Path

import pytest

from nnfuzz.backends.known import classify

CASES = Path(__file__).parents[1] / "cases" / "gpu-errors"


@pytest.mark.parametrize("log,engine,op", [
    ("ort-gpu-scatternd-mul-double.log", "ort", "ScatterND"),
    ("ort-gpu-scatternd-uint8.log", "ort", "ScatterND"),
    ("inductor-gpu-addmm-int.log", "inductor", None),
    ("inductor-gpu-baddbmm-long.log", "inductor", None),
    ("tvm-topk-k-computed.log", "tvm", None),
    ("tvm-topk-unsorted.log", "tvm", None),
    ("tvm-groupnorm-stash-double.log", "tvm", None),
    ("tvm-resize-computed-sizes.log", "tvm", None),
    # tvm-cpu campaigns' (issue 16's 15-minute runs)
    ("../cpu-errors/tvm-split-computed.log", "tvm", None),
    ("../cpu-errors/tvm-constant-axes.log", "tvm", None),
    ("../cpu-errors/tvm-slice-dynamic-shapeexpr.log", "tvm", None),
    ("../cpu-errors/tvm-resize-half-pixel-symmetric.log", "tvm", None),
    # an xla-cpu oracle=grad campaign's: TF eager (the expected side) refuses a dilated transposed convolution
    ("../cpu-errors/tf-conv-backprop-input-dilated.log", "tf", None),
    ("../cpu-errors/tf-conv-backprop-input-dilated.log", "xla", None),
])
def test_a_missing_cuda_kernel_is_unsupported(log, engine, op):
    k = classify(engine, (CASES / log).read_text())
    assert k is not None and k.kind == "unsupported" and k.op == op, log


@pytest.mark.parametrize("log,engine", [
    ("ort-gpu-gelu-invalid-argument.log", "ort"),   # a 1-element float16 Gelu(tanh): CUDA launch fails
    ("ort-gpu-gelu-scalar.log", "ort"),             # a 0-d Gelu, valid ONNX, refused by the CUDA kernel
    ("inductor-gpu-triton-passmanager.log", "inductor"),  # Triton fails to compile inductor's kernel
    ("tvm-gpu-dlight-gemv-assert.log", "tvm"),  # dlight's GPU gemv rule asserts on a valid model
    ("tvm-tile-shapeexpr.log", "tvm"),          # a statically known shape computed in the graph (as bugs/kept/0007)
    ("inductor-gpu-atomic-add-int8.log", "inductor"),  # inductor emits Triton's atomic_add on int8, which has none
    ("tvm-gpu-nvrtc-hnearbyint.log", "tvm"),    # TVM writes float16 Round as hnearbyint, which CUDA has not
    # TF eager's gradient of tf.nn.avg_pool on a 5-D input reads a data_format attr its own wrapper left None
    ("../cpu-errors/tf-avgpool3d-grad-data-format.log", "tf"),
])
def test_a_crash_on_a_valid_model_stays_a_bug(log, engine):
    assert classify(engine, (CASES / log).read_text()) is None, log


def test_the_patterns_need_their_words():
    """Not any 'not implemented': the ScatterND entry needs its op's name, the torch one a CUDA kernel's."""
    assert classify("ort", "element_type 11 not implemented for ScatterElements operator.") is None
    assert classify("inductor", "NotImplementedError: \"addmm_impl_cpu_\" not implemented for 'Half'") is None


def test_a_kernel_that_fails_in_inductors_compile_workers_is_signed_by_the_workers_own_error():
    """Every kernel that fails in a compile worker says "SubprocException: An exception occurred in a
    subprocess:" first (the H100 campaign signed Triton's 8-bit atomic_add only so): the message is the
    subprocess's own first exception."""
    from nnfuzz.triage.rootcause import root_cause

    log = (CASES / "inductor-gpu-atomic-add-int8.log").read_text()
    assert root_cause(log.splitlines()[0], log) == ("", "ValueError: atomic_add does not support int8")


def test_cuda_code_nvrtc_refuses_is_signed_by_the_compilers_error():
    from nnfuzz.triage.rootcause import root_cause

    log = (CASES / "tvm-gpu-nvrtc-hnearbyint.log").read_text(errors="replace")
    assert root_cause("RuntimeError: NVRTC compilation failed:", log)[1] == 'error: identifier "hnearbyint" is undefined'
