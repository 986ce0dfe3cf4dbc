"""`--json` in real processes (issue 31's bars): stdout carries exactly one JSON document, whatever the
systems and the worker processes print, and the human text goes to stderr; the OpenVINO Resize bug's
replay shows the system's innermost message."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _nnfuzz(*args, timeout=240, cwd=None):
    return subprocess.run([sys.executable, "-m", "nnfuzz.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=ENV, cwd=cwd)


@pytest.mark.slow
def test_fuzz_json_is_alone_on_stdout_and_the_ending_on_stderr(tmp_path):
    pytest.importorskip("onnxruntime")
    r = _nnfuzz("fuzz", "time=20s", "--json", "fuzz.workers=1", "ui=plain", f"fuzz.out={tmp_path / 'bugs'}",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(r.stdout)  # the whole of stdout: `| jq .tests` works
    assert doc["tests"] > 0 and doc["out"] == str(tmp_path / "bugs"), doc
    assert "probe: ort-cpu reads opsets" in r.stderr  # the probe's lines are logs: stderr
    assert f"\nnext:\n  nnfuzz report {tmp_path / 'bugs'}" in r.stderr, r.stderr[-2000:]
    assert f"nnfuzz fuzz ort-cpu: {doc['tests']} tests" in r.stderr


@pytest.mark.slow
def test_backends_json_without_the_systems_start_up_logs():
    r = _nnfuzz("backends", "--json")
    assert r.returncode == 0, r.stderr[-3000:]
    rows = {row["name"]: row for row in json.loads(r.stdout)["backends"]}
    assert rows["ort-cpu"]["usable"] is True, rows["ort-cpu"]
    # TensorFlow's absl and oneDNN lines (printed on import, whatever TF_CPP_MIN_LOG_LEVEL says) are held back
    assert "absl::InitializeLog" not in r.stderr and "oneDNN" not in r.stderr, r.stderr
    if rows["tf-cpu"]["usable"]:
        r = _nnfuzz("backends", "debug=true")
        assert r.returncode == 0 and "oneDNN custom operations" in r.stderr, r.stderr[-2000:]
        assert r.stdout.splitlines()[0].startswith("inductor-cpu") and "{" not in r.stdout


@pytest.mark.slow
def test_repro_of_the_openvino_resize_bug_shows_the_innermost_message():
    pytest.importorskip("openvino")
    bug = ROOT / "bugs" / "kept" / "0002"
    assert "Resize" in json.loads((bug / "meta.json").read_text())["signature"]
    r = _nnfuzz("repro", str(bug), "--json")
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(r.stdout)
    assert doc["reproduces"] is True
    assert doc["message"] == "RuntimeError: Resize: All axes values should less than input rank: 3", doc
    r = _nnfuzz("repro", str(bug))
    assert r.returncode == 0 and r.stdout.count("\n") == 1, r.stdout
    assert r.stdout.startswith(f"{bug}: reproduces on openvino-cpu ") and "All axes values should less" in r.stdout
