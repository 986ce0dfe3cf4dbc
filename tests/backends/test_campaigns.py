"""Short smoke campaigns (a few tests each) on every CPU backend the campaign issue did not cover, and on each oracle:
tests run, nnfuzz itself raises nothing, bugs are saved under the right system in the right format, and
every bug that is not flaky replays with `nnfuzz repro`."""
import importlib.util
import json
from pathlib import Path

import pytest

from nnfuzz.cli import main
from nnfuzz.errors import ConfigError
from nnfuzz.fuzz.campaign import CampaignConfig
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.oracles import campaign_oracles
from nnfuzz.triage.bugstore import load_bug
from nnfuzz.fuzz.runlog import read_log

NEEDS = {"openvino-cpu": "openvino", "inductor-cpu": "torch", "tf-cpu": "tensorflow", "xla-cpu": "tensorflow",
         "tflite-cpu": "ai_edge_litert", "ort-cpu": "onnxruntime", "tvm-cpu": "tvm"}


def expected_side(kind, backend, options, cmp_with=None):
    """The oracle ``oracle=kind`` (and ``cmp.with``) gives a campaign on ``backend``."""
    cc = CampaignConfig(backend=backend, backend_options=options, policy=GenPolicy(), time_s=1, out=Path("."),
                        oracle=kind, cmp_with=cmp_with)
    return campaign_oracles(cc)[-1]


def _campaign(tmp_path, monkeypatch, capsys, backend, *extra, time_s=12):
    if importlib.util.find_spec(NEEDS[backend]) is None:
        pytest.skip(f"{NEEDS[backend]} is not installed")
    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "bugs"
    # one process makes the models: on CI's two cores, producer processes starting beside two sandbox
    # workers (TF, torch and TVM imports) can take most of a short campaign. A 60 s test timeout: beside the
    # other pytest worker, inductor's C++ compiles once took over 3x10 s and were saved as timeouts that
    # pass alone (timeout bugs are tested with a hanging fault backend, tests/fuzz/test_campaign.py)
    assert main(["fuzz", "--json", f"backend={backend}", f"time={time_s}s", f"fuzz.out={out}", "ui=plain",
                 "fuzz.producers=0", "fuzz.test_timeout=60", "fuzz.reduce=false", *extra]) == 0
    s = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert s["tests"] > 0, s
    assert s["nnfuzz_errors"] == 0, f"nnfuzz raised during the campaign: {s}"
    end = list(read_log(out))[-1]
    assert end["campaign_end"]["stopped"] is None and end["t"] < time_s + 10, end  # its own clock: the bound held
    bugs = [load_bug(p) for p in sorted(out.iterdir()) if p.is_dir() and p.name.isdigit()]
    return s, bugs


def _replays(bugs, systems):
    for bug in bugs:
        assert bug.meta.system in systems, bug.meta.system
        if not bug.meta.flaky:
            assert main(["repro", str(bug.path)]) == 0, f"{bug.path} does not reproduce: {bug.meta.summary}"


@pytest.mark.parametrize("backend", ["openvino-cpu", "inductor-cpu", "tf-cpu", "xla-cpu", "tflite-cpu"])
@pytest.mark.slow
def test_smoke_campaign(backend, tmp_path, monkeypatch, capsys):
    # a system's start-up (the probe, TF or torch imports, inductor's 12 s, XLA's first compiles) can fill a short
    # campaign beside the other pytest worker: CI once ran no test in 20 s on inductor-cpu, and in 12 s on xla-cpu.
    # So each stops after a few tests, or at 60 s
    tests = 2 if backend == "inductor-cpu" else 6
    s, bugs = _campaign(tmp_path, monkeypatch, capsys, backend, f"fuzz.max_tests={tests}", time_s=60)
    expected = expected_side("reference", backend, {}).expected_system
    for bug in bugs:
        # fuzz.dynamic=auto: a dynamic test is judged by the dynamic oracle, against torch eager at each shape
        assert bug.meta.oracle["kind"] == ("dynamic" if bug.meta.dynamic is not None else "reference"), bug.meta.oracle
        assert bug.meta.oracle["expected"]["system"] == (expected or "torch-eager")
        is_tf = bug.meta.system in ("tf-cpu", "xla-cpu", "tflite-cpu")
        assert (bug.path / "model").is_dir() == is_tf
        assert bug.format == ("onnx" if bug.meta.system == "openvino-cpu" else "gir")
    _replays(bugs, {backend, expected})


@pytest.mark.slow
def test_optlevel_oracle_compares_the_system_with_itself_unoptimized(tmp_path, monkeypatch, capsys):
    s, bugs = _campaign(tmp_path, monkeypatch, capsys, "ort-cpu", "oracle=optlevel")
    assert s["oracle"] == "optlevel"
    for bug in bugs:
        o = bug.meta.oracle
        assert o["kind"] == "optlevel" and o["expected"]["options"]["opt_level"] == "disable"
    _replays(bugs, {"ort-cpu"})


@pytest.mark.slow
def test_cmp_with_runs_a_second_system_on_the_same_model(tmp_path, monkeypatch, capsys):
    pytest.importorskip("openvino")
    s, bugs = _campaign(tmp_path, monkeypatch, capsys, "ort-cpu", "cmp.with=openvino-cpu")
    assert s["oracle"] == "cmp.with=openvino-cpu"
    log = list(read_log(tmp_path / "bugs"))
    assert any(r.get("verdict") == "pass" for r in log)
    for bug in bugs:
        assert bug.meta.oracle["kind"] == "cmp"
        assert {bug.meta.oracle["under_test"]["system"], bug.meta.oracle["expected"]["system"]} == \
            {"ort-cpu", "openvino-cpu"}
    _replays(bugs, {"ort-cpu", "openvino-cpu"})


@pytest.mark.parametrize("kind, backend, cmp_with, message", [
    ("optlevel", "openvino-cpu", None, "no switch that turns its optimisations off"),
    ("devices", "ort-cpu", None, None),  # ort-gpu exists: the spec is valid, running it needs a GPU
    ("devices", "openvino-cpu", None, "has no openvino-gpu"),
    ("cmp", "ort-cpu", None, "cmp.with=<backend>"),
    ("reference", "ort-cpu", "ort-cpu", "the backend under test itself"),
    ("optlevel", "ort-cpu", "tvm-cpu", "use one"),
    ("fastest", "ort-cpu", None, "choose one of"),
    ("reference", "ort-cpu", "nosuch-cpu", "known backends"),
])
def test_oracle_config_errors_name_the_value_and_the_fix(kind, backend, cmp_with, message):
    if message is None:
        assert expected_side(kind, backend, {}, cmp_with).expected_system == "ort-gpu"
        return
    with pytest.raises(ConfigError, match=message):
        expected_side(kind, backend, {}, cmp_with)


def test_optlevel_pairs():
    assert expected_side("optlevel", "tvm-cpu", {"pipeline": "default"}).expected_options == {"pipeline": "default_build"}
    assert expected_side("optlevel", "xla-cpu", {}).expected_options == {"jit_compile": False}
    assert expected_side("optlevel", "inductor-cpu", {}).expected_system is None  # torch.compile vs torch eager
    assert expected_side("reference", "xla-cpu", {}).expected_system == "tf-cpu"


@pytest.mark.slow  # imports every system; one of them (openvino's converter telemetry) starts a process
def test_backends_command_lists_every_backend_and_why_it_cannot_run(capsys):
    from nnfuzz.backends.registry import BACKENDS

    assert main(["backends", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["backends"]
    assert sorted(r["name"] for r in rows) == sorted(BACKENDS)
    for r in rows:
        assert r["usable"] or r["why"], r
        assert "checking it failed" not in r.get("why", ""), r
    by = {r["name"]: r for r in rows}
    assert by["ort-cpu"]["usable"] and by["ort-cpu"]["optlevel"] == "vs opt_level=disable"
    assert by["xla-cpu"]["reference"] == "tf-cpu"
    from nnfuzz.fuzz.sizing import auto_workers

    assert by["ort-cpu"]["workers"] == auto_workers(1, "cpu", 4096) >= 1  # fuzz.workers=auto, per backend
    assert by["tvm-gpu"]["workers"] == 1
