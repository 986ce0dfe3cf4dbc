"""A backend in another package: tests/plugin_backend/ (``nnfuzz-toyort``, entry point ``toyort-cpu`` in
the ``nnfuzz.backends`` group) is installed into a fresh venv that sees this environment's packages
(nnfuzz among them), and fuzzed there by name, with no nnfuzz file naming it."""
import json
import os
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from nnfuzz.fuzz.runlog import read_log

PACKAGE = Path(__file__).parents[1] / "plugin_backend"
MAIN = "import sys; from nnfuzz.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A venv with the plug-in installed (no dependencies, no build isolation: nothing is downloaded)."""
    pytest.importorskip("onnxruntime")
    root = tmp_path_factory.mktemp("plugin")
    d, src = root / "venv", root / "src"
    shutil.copytree(PACKAGE, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))  # builds there
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(d)], check=True, timeout=120)
    python = d / "bin" / "python"
    # this interpreter's own site-packages too, where it is itself a venv (--system-site-packages sees the base)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "outer.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--no-index", str(src)], check=True, timeout=300, capture_output=True)
    return python


def _run(python, *args, timeout=300, **kw):
    return subprocess.run([str(python), *args], capture_output=True, text=True, timeout=timeout, **kw)


@pytest.mark.slow
def test_the_venv_sees_the_plugin_and_nnfuzz_from_this_checkout(venv):
    r = _run(venv, "-c", textwrap.dedent("""
        import nnfuzz
        from nnfuzz.backends import backend_class, known_backends
        from nnfuzz.backends.known import classify
        print(nnfuzz.__file__)
        print(backend_class("toyort-cpu").__module__, "toyort-cpu" in known_backends())
        print(classify("toyort", "NOT_IMPLEMENTED : Could not find an implementation for Foo(1)").note)
    """))
    assert r.returncode == 0, r.stderr
    where, cls, note = r.stdout.strip().splitlines()
    assert Path(where).resolve() == (Path(__file__).parents[2] / "nnfuzz" / "__init__.py").resolve()
    assert cls == "nnfuzz_toyort True"
    assert note == "toyort: onnxruntime has no CPU kernel for this op x dtype"  # the plug-in's own entry


@pytest.mark.slow
def test_nnfuzz_backends_lists_the_plugin_as_usable(venv):
    r = _run(venv, "-c", MAIN, "backends", "--json")
    assert r.returncode == 0, r.stderr[-3000:]
    rows = {row["name"]: row for row in json.loads(r.stdout.strip().splitlines()[-1])["backends"]}
    assert rows["toyort-cpu"]["usable"] and rows["toyort-cpu"]["version"].startswith("0.1.0+ort"), rows["toyort-cpu"]
    assert "ort-cpu" in rows


@pytest.mark.slow
def test_a_campaign_fuzzes_the_plugin_by_name_with_its_own_knowledge(venv, tmp_path):
    """float64 Tan has no ONNX Runtime CPU kernel: only the plug-in's own known limitation (engine
    "toyort", which no built-in has) makes those tests UNSUPPORTED rather than saved crashes."""
    out = tmp_path / "bugs"
    r = _run(venv, "-c", MAIN, "fuzz", "--json", "backend=toyort-cpu", "time=90s", "fuzz.max_tests=4", f"fuzz.out={out}",
             "ui=plain", "fuzz.probe=false", "fuzz.producers=0", "fuzz.workers=1", "mgen.max_nodes=2",
             "mgen.dtypes=[float64]", "mgen.include=[Tan]", "mgen.seed=1",
             env={**os.environ, "NNFUZZ_CACHE": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["backend"] == "toyort-cpu" and summary["tests"] >= 4, summary
    assert summary["verdicts"] == {"unsupported": summary["tests"]} and summary["bugs_saved"] == 0, summary
    assert "toyort-cpu (0.1.0+ort" in r.stdout + r.stderr  # the status line: the plug-in's own version
    header = next(read_log(out))
    assert header["campaign"]["backend"] == "toyort-cpu"
