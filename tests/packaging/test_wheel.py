"""A built wheel works on its own: built with `pip wheel --no-deps`, installed into a fresh virtual
environment (torch from the pinned wheel), and run from a folder outside the repository."""
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def _run(cmd, cwd, timeout, env=None):
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert r.returncode == 0, f"{cmd} exited {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


def _build_wheel(tmp: Path) -> Path:
    """Build from a copy of the sources (conf/ and the nnfuzz/conf symlink as they are), so the checkout
    gets no build/ folder."""
    src = tmp / "src"
    src.mkdir()
    for name in ("nnfuzz", "conf"):
        shutil.copytree(ROOT / name, src / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    assert (src / "nnfuzz" / "conf").is_symlink()
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", tmp / "dist", src],
         tmp, 300)
    (wheel,) = (tmp / "dist").glob("nnfuzz-*.whl")
    return wheel


@pytest.mark.slow
def test_the_wheel_carries_every_config_of_the_repository(tmp_path):
    wheel = _build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    repo_confs = {f"nnfuzz/conf/{p.relative_to(ROOT / 'conf').as_posix()}" for p in (ROOT / "conf").rglob("*.yaml")}
    assert "nnfuzz/conf/main.yaml" in repo_confs and repo_confs <= names, sorted(repo_confs - names)


@pytest.mark.slow
def test_the_installed_wheel_runs_outside_the_repository(tmp_path):
    wheel = _build_wheel(tmp_path)
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NNFUZZ_CONF")}  # nothing of the checkout
    _run([sys.executable, "-m", "venv", venv], tmp_path, 120, env)
    pip, nnfuzz = venv / "bin" / "pip", venv / "bin" / "nnfuzz"
    _run([pip, "install", "-q", "torch==2.13.0"], tmp_path, 600, env)
    _run([pip, "install", "-q", f"{wheel}[onnx]"], tmp_path, 600, env)
    work = tmp_path / "elsewhere"
    work.mkdir()
    r = _run([venv / "bin" / "python", "-c", "import nnfuzz.config as c; print(c.__file__); print(c.conf_dir())"],
             work, 60, env)
    where, conf = r.stdout.split()
    assert Path(where).is_relative_to(venv) and Path(conf).is_relative_to(venv) and not Path(conf).is_symlink()
    r = _run([nnfuzz, "ops"], work, 240, env)
    assert "Relu" in r.stdout and "Conv2d" in r.stdout
    # no probe and no producer processes: the 10 s go to tests. How many fit depends on the machine's load,
    # so the check is that the campaign ran through, found its configs and wrote its summary and log.
    r = _run([nnfuzz, "fuzz", "--json", "time=10s", "ui=plain", "fuzz.probe=false", "fuzz.producers=0"], work, 240, env)
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["backend"] == "ort-cpu" and summary["out"] == "bugs", r.stdout[-2000:]
    assert set(summary["verdicts"]) <= {"pass", "unsupported", "crash", "inconsistency", "timeout"}, summary
    assert (work / "bugs" / "campaign.jsonl").is_file()
