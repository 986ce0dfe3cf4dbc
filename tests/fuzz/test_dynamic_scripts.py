"""Standalone scripts of dynamic bugs (nnfuzz/triage/script_shapes.py, docs/dynamic-shapes.md): the model is
built with its symbolic dims, compiled once, run at every recorded shape and each compared with that
shape's expected outputs; the script names the shapes that differ."""
import subprocess
import sys

import pytest
from dynamic_bugs import dynamic_bug, sizes_of
from report_helpers import imports_of

from nnfuzz.backends.registry import backend_class
from nnfuzz.cli import main
from nnfuzz.errors import ConfigError
from nnfuzz.triage.bugstore import load_bug
from nnfuzz.triage.report_md import write_report
from nnfuzz.triage.script import write_script
from nnfuzz.verdict import DEFAULT_TOLERANCES

ALLOWED = {"base64", "ml_dtypes", "numpy", "onnx", "onnxruntime", "tvm", "openvino"}
COMPILES = {"ort-cpu": "ort.InferenceSession(", "openvino-cpu": "core.compile_model(", "tvm-cpu": "tvm.compile("}


def _run(path, cwd):
    return subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_onnx_scripts_of_a_dynamic_bug_compile_once_and_loop_over_every_shape(tmp_path, monkeypatch):
    bug = load_bug(dynamic_bug(tmp_path, off_at=2))
    sizes = sizes_of(bug.path)
    symbols = sorted({s for axes in bug.meta.dynamic["dims"].values() for s in axes if s})
    for system, compile_call in COMPILES.items():
        text = write_script(bug, system, DEFAULT_TOLERANCES)
        compile(text, f"repro_{system}.py", "exec")  # valid Python
        assert imports_of(text) <= ALLOWED, (system, imports_of(text))
        assert text.count("SHAPES.append(") == len(bug.oracle["shapes"]) == len(sizes)
        assert all(f"SHAPES.append(({a!r}, INPUTS, EXPECTED))" in text for a in sizes)
        assert all(repr(s) in text for s in symbols)  # the inputs' dim_params, in the helper calls
        loop = text.index("for k, (SIZES, INPUTS, EXPECTED) in enumerate(SHAPES)")
        assert text.count(compile_call) == 1 and text.index(compile_call) < loop, system  # compiled once
        assert "\n    OUTPUTS = " in text[loop:] and "OUTPUTS = " not in text[:loop], system  # run per shape
    report = write_report(bug, "ort-cpu", text)
    assert f"compiled once and run at {len(sizes)} shapes" in report and f"fails at shape 2 {sizes[2]}" in report
    plain = ("onnxruntime", "".join(backend_class("ort-cpu").repro_onnx[1:]))  # a plug-in's (needs, code) pair
    monkeypatch.setattr(backend_class("ort-cpu"), "repro_onnx", plain)
    with pytest.raises(ConfigError, match="does not part its compile from its run"):
        write_script(bug, "ort-cpu", DEFAULT_TOLERANCES)


@pytest.mark.slow
def test_ort_script_names_the_shape_that_fails_and_passes_on_a_correct_reference(tmp_path):
    pytest.importorskip("onnxruntime")
    bad = dynamic_bug(tmp_path, off_at=2)  # shape 2's recorded reference is off: ORT disagrees there only
    assert main(["repro", str(bad), "--script"]) == 0
    r = _run(bad / "repro_ort-cpu.py", tmp_path)
    sizes = sizes_of(bad)
    assert r.returncode == 1 and not r.stderr, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[:len(sizes)] == [f"shape {k} {a}: outputs {'differ' if k == 2 else 'match'}"
                                  for k, a in enumerate(sizes)], r.stdout
    assert lines[len(sizes)].startswith("reproduced:") and all(x.startswith(f"  shape 2 {sizes[2]}: ")
                                                              for x in lines[len(sizes) + 1:]), r.stdout
    good = dynamic_bug(tmp_path, off_at=None)
    assert main(["repro", str(good), "--script"]) == 0
    r = _run(good / "repro_ort-cpu.py", tmp_path)
    assert r.returncode == 0 and r.stdout.endswith("not reproduced\n") and "differ" not in r.stdout, r.stderr


@pytest.mark.slow
def test_tvm_script_compiles_the_symbolic_model_once_and_passes_every_shape(tmp_path):
    pytest.importorskip("tvm")
    good = dynamic_bug(tmp_path, off_at=None)
    assert main(["repro", str(good), "--script", "backend=tvm-cpu"]) == 0
    r = _run(good / "repro_tvm-cpu.py", tmp_path)
    assert r.returncode == 0 and r.stdout.count(": outputs match\n") == len(sizes_of(good)), r.stdout + r.stderr


@pytest.mark.slow
def test_inductor_script_exports_the_symbolic_dims_and_names_the_shape_that_fails(tmp_path):
    bad = dynamic_bug(tmp_path, off_at=1, fmt="gir", system="inductor-cpu")
    assert main(["repro", str(bad), "--script"]) == 0
    text = (bad / "repro_inductor-cpu.py").read_text()
    assert imports_of(text) <= {"base64", "io", "ml_dtypes", "numpy", "torch"}, imports_of(text)
    assert text.count("torch.compile(") == 1 and "dynamic=True" in text and "mark_unbacked" in text
    r = _run(bad / "repro_inductor-cpu.py", tmp_path)
    sizes = sizes_of(bad)
    assert r.returncode == 1, r.stdout + r.stderr
    assert [f"shape {k} {a}: outputs {'differ' if k == 1 else 'match'}" for k, a in enumerate(sizes)] == \
        r.stdout.splitlines()[:len(sizes)], r.stdout + r.stderr


def test_an_inductor_family_torch_export_cannot_trace_is_refused_with_the_reason(tmp_path):
    """torch.export would specialize a symbol traced at size 1: a family whose every shape has a symbol of size 1
    is refused, saying so, before any export."""
    import dataclasses

    import torch

    from nnfuzz.gir import ShapeFamily
    from nnfuzz.materialize.portable import unpack
    from nnfuzz.triage.script_torch import _dynamic_export

    bug = load_bug(dynamic_bug(tmp_path, fmt="gir", system="inductor-cpu"))
    gir, _ = unpack(bug.model_bytes)
    symbols = gir.family.symbols()
    _, (per_input,) = _dynamic_export(bug, gir, torch)  # the recorded family: one Dim per symbol, shared by name
    assert {d.__name__ for axes in per_input if axes for d in axes.values()} == set(symbols)
    ones = ShapeFamily(gir.family.dims, [{s: 1 if s == symbols[0] else 2 for s in symbols}] * len(bug.oracle["shapes"]))
    with pytest.raises(ConfigError, match="each have a symbol of size 1.*nnfuzz repro"):
        _dynamic_export(bug, dataclasses.replace(gir, family=ones), torch)
