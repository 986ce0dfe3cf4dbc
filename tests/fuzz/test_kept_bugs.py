"""Every bug kept in the repository's bugs/kept/ still reproduces on its system (`nnfuzz repro` exits 0), and
its standalone script shows it without nnfuzz. Systems not installed here skip, and so do bugs whose
meta.json ``cpu_flags`` this CPU lacks; one that passes on a CPU whose vector ISA differs from the one its
meta.json ``found.cpu`` names is skipped with the difference (the system picks other kernels there). A bug
kept as ``flaky`` (heap corruption: each replay dies by another signal, or survives with wrong values)
reproduces when its replay fails in any way (exit 0 or 3); one whose model passes (exit 1) fails the test."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from machine import missing_cpu_flags

from nnfuzz.backends import backend_class
from nnfuzz.cli import main
from nnfuzz.triage.bugstore import BUG_DIR, load_bug
from nnfuzz.triage.cpu import isa_difference

KEPT = sorted(p for p in (Path(__file__).parent.parent.parent / "bugs" / "kept").iterdir() if p.is_dir() and BUG_DIR.match(p.name))
MODULE = {"ort": "onnxruntime", "tvm": "tvm", "openvino": "openvino", "tf": "tensorflow", "xla": "tensorflow",
          "tflite": "ai_edge_litert", "inductor": "torch"}


@pytest.mark.parametrize("folder", KEPT, ids=[p.name for p in KEPT])
@pytest.mark.slow
def test_kept_bug_reproduces(folder, tmp_path):
    system = load_bug(folder).meta.system
    engine = backend_class(system).engine
    if importlib.util.find_spec(MODULE.get(engine, engine)) is None:
        pytest.skip(f"{system} is not installed here")
    missing = missing_cpu_flags(load_bug(folder).meta)
    if missing:
        pytest.skip(f"{folder.name} needs a CPU with {missing}")
    rc = main(["repro", str(folder)])
    if rc == 1 and isa_difference(load_bug(folder).meta.found):
        pytest.skip(f"{folder.name} passes here: {isa_difference(load_bug(folder).meta.found)}")
    assert rc in ((0, 3) if load_bug(folder).meta.flaky else (0,)), f"nnfuzz repro {folder} exited {rc}"
    script = folder / f"repro_{system}.py"
    assert script.is_file(), f"{folder} lacks its standalone script: run `nnfuzz repro {folder} --report`"
    r = subprocess.run([sys.executable, "-I", str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode != 0 and "not reproduced" not in r.stdout, r.stdout + r.stderr
