"""Campaigns end to end: real smoke campaigns on ort-cpu and tvm-cpu, the time bound, faults at
campaign level, atomic bug folders under SIGKILL (whose children die with it), and `nnfuzz repro` on
what was saved. Stopping by signal: test_signals.py."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from nnfuzz.cli import main
from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.triage.bugstore import REQUIRED, load_bug
from procs import alive, descendants
from nnfuzz.fuzz.runlog import read_log

FAULT = "fault_backend:FaultBackend"
HERE = Path(__file__).parent
SAFE_OPS = ["Relu", "Add", "Mul", "Sigmoid", "Tanh", "Transpose"]  # finite reference outputs every time


def _fault_campaign(tmp_path, always, **kw):
    sys.path.insert(0, str(HERE))
    cc = CampaignConfig(backend="fault-cpu", backend_options={"always": always}, backend_path=FAULT,
                        policy=GenPolicy(max_nodes=4, dtypes=["float32"], include=SAFE_OPS), out=tmp_path / "bugs",
                        ui="plain", probe=False, **{"reduce": False, **kw})  # reduce=True where a test wants it
    return run_campaign(cc), cc


def _summary(capsys) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


@pytest.mark.parametrize("backend", ["ort-cpu", "tvm-cpu"])
@pytest.mark.slow
def test_smoke_campaign_runs_tests_and_every_bug_reproduces(backend, tmp_path, capsys, monkeypatch):
    pytest.importorskip({"ort-cpu": "onnxruntime", "tvm-cpu": "tvm"}[backend])
    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "bugs"
    # a 60 s test timeout: beside the other pytest worker a compile can take over 3x10 s (see test_campaigns)
    assert main(["fuzz", "--json", f"backend={backend}", "time=20s", "fuzz.test_timeout=60", f"fuzz.out={out}",
                 "ui=plain"]) == 0
    s = _summary(capsys)
    assert s["tests"] > 0, s
    log = list(read_log(out))
    assert sum("verdict" in r for r in log) >= s["tests"]
    assert "campaign_end" in log[-1] and log[-1]["t"] < 20 + 10, log[-1]  # its own clock: the bound held
    for folder in sorted(p for p in out.iterdir() if p.is_dir() and p.name.isdigit()):
        bug = load_bug(folder)
        assert bug.meta.system == backend and bug.meta.symptom in ("crash", "inconsistency", "timeout")
        if not bug.meta.flaky:
            assert main(["repro", str(folder)]) == 0, f"{folder} does not reproduce: {bug.meta.summary}"


@pytest.mark.slow
def test_time_bound_holds_when_the_backend_hangs(tmp_path):
    counters, cc = _fault_campaign(tmp_path, "hang", time_s=6.0, test_timeout=60.0)
    assert counters.tests == 0  # the one hang was cut by the campaign bound: not a timeout bug
    end = list(read_log(cc.out))[-1]
    assert "campaign_end" in end and end["t"] < 6.0 + 3.0, end  # its own clock: the hung run was cut at the bound
    counters, _ = _fault_campaign(tmp_path / "short", "hang", time_s=8.0, test_timeout=1.5, rerun=False)
    # each timeout saved, or counted beyond fuzz.keep_per_signature (3) examples of its one signature
    assert counters.verdicts["timeout"] >= 2 and counters.bugs_saved == min(3, counters.verdicts["timeout"])
    assert counters.bugs_saved + counters.counted == counters.verdicts["timeout"]


@pytest.mark.parametrize("fault, symptom", [("segfault", "crash"), ("raise", "crash"), ("wrong", "inconsistency"),
                                            ("leak", "crash")])
@pytest.mark.slow
def test_faults_become_saved_bugs_and_the_campaign_goes_on(tmp_path, fault, symptom):
    counters, cc = _fault_campaign(tmp_path, fault, time_s=60.0, max_tests=3, memory_limit_mb=400,
                                   test_timeout=20.0)
    assert counters.tests == 3 and counters.verdicts[symptom] == 3, dict(counters.verdicts)
    bugs = sorted(p for p in cc.out.iterdir() if p.name.isdigit())
    assert [p.name for p in bugs] == ["0000", "0001", "0002"]
    meta = load_bug(bugs[0]).meta
    assert meta.symptom == symptom and meta.flaky is False
    assert meta.version == "1.0-fault" and meta.version_id.startswith("fault+ort")
    if fault == "segfault":
        assert meta.signal == signal.SIGSEGV


@pytest.mark.slow
def test_producer_processes_feed_the_campaign(tmp_path):
    counters, cc = _fault_campaign(tmp_path, "wrong", time_s=60.0, max_tests=4, producers=2)
    assert counters.tests >= 4 and counters.verdicts["inconsistency"] == counters.tests
    assert 0 < counters.first_test < counters.elapsed
    bugs = sorted(p for p in cc.out.iterdir() if p.name.isdigit())
    assert len(bugs) == counters.bugs_saved >= 4
    seeds = {load_bug(b).meta.seed for b in bugs}
    assert len(seeds) == len(bugs)  # producers interleave seeds: no model is tested twice
    assert main(["repro", str(bugs[0]), "backend=ort-cpu"]) in (0, 1, 3)  # a plain ORT replay runs


@pytest.mark.parametrize("producers", [0, 1])
@pytest.mark.slow
def test_value_search_outcome_is_logged_and_saved(tmp_path, producers):
    counters, cc = _fault_campaign(tmp_path, "wrong", time_s=60.0, max_tests=2, producers=producers)
    log = list(read_log(cc.out))
    tested = [r for r in log if r.get("verdict") == "inconsistency"]
    assert tested and all(r["search"]["ok"] is True and r["search"]["ms"] >= 0 for r in tested)
    assert all("search" in r["seconds"] for r in tested)
    meta = load_bug(sorted(p for p in cc.out.iterdir() if p.name.isdigit())[0]).meta
    assert meta.search["ok"] is True and meta.search["blocker"] is None
    assert counters.seconds["search"] > 0
    # every value the "wrong" backend returns is off by one: the first node diverges, and the numpy
    # reference sides with torch
    assert meta.first_divergent_node["index"] == 0 and meta.blame == "system-under-test", meta

    counters, cc = _fault_campaign(tmp_path / "off", "wrong", time_s=60.0, max_tests=1, producers=producers,
                                   search=None)
    meta = load_bug(sorted(p for p in cc.out.iterdir() if p.name.isdigit())[0]).meta
    assert meta.search is None


@pytest.mark.slow
def test_campaign_marks_duplicates_across_campaigns(tmp_path):
    counters, cc = _fault_campaign(tmp_path, "raise", time_s=60.0, max_tests=3, rerun=False)
    metas = [load_bug(b).meta for b in sorted(p for p in cc.out.iterdir() if p.name.isdigit())]
    assert [m.duplicate_of for m in metas] == [None, "0000", "0000"]
    assert len({m.signature for m in metas}) == 1 and "crash" in metas[0].signature
    assert counters.new_unique == 1 and counters.unique_bugs == 1
    counters, cc = _fault_campaign(tmp_path, "raise", time_s=60.0, max_tests=1, rerun=False)  # same store
    assert counters.new_unique == 0 and counters.unique_bugs == 1
    # the store holds fuzz.keep_per_signature (3) examples already: the fourth is counted, not saved
    assert counters.counted == 1 and counters.bugs_saved == 0 and not (cc.out / "0003").exists()
    counters, cc = _fault_campaign(tmp_path, "raise", time_s=60.0, max_tests=1, rerun=False, keep_per_signature=0)
    assert load_bug(cc.out / "0003").meta.duplicate_of == "0000"  # (0: every example kept)


@pytest.mark.slow
def test_campaign_reduces_new_bugs_when_asked(tmp_path):
    counters, cc = _fault_campaign(tmp_path, "wrong", time_s=60.0, max_tests=2, rerun=False, reduce=True,
                                   reduce_s=20.0)
    bugs = [load_bug(b) for b in sorted(p for p in cc.out.iterdir() if p.name.isdigit())]
    first = bugs[0]
    assert first.meta.reduced["nodes_after"] < first.meta.reduced["nodes_before"]
    assert (first.path / "original" / "gir.json").is_file()
    assert all(b.meta.reduced is None for b in bugs if b.meta.duplicate_of)  # duplicates are left as saved
    assert counters.reduced == counters.new_unique >= 1 and counters.seconds["triage"] > 0


@pytest.mark.slow
def test_unsupported_is_not_a_bug_but_nan_outputs_are(tmp_path):
    counters, cc = _fault_campaign(tmp_path, "unsupported", time_s=60.0, max_tests=3)
    assert counters.verdicts["unsupported"] == 3 and counters.bugs_saved == 0
    counters, cc = _fault_campaign(tmp_path / "nan", "nan", time_s=60.0, max_tests=2)
    assert counters.verdicts["inconsistency"] == 2 and counters.bugs_saved == 2


@pytest.mark.slow
def test_a_timeout_that_ends_given_more_time_is_slow_not_a_bug(tmp_path):
    """A run past fuzz.test_timeout is tried again with SLOW_PATIENCE times the time: a compile that ends
    then (a loaded machine, a long compile) takes that run's verdict; a hang stays a timeout."""
    counters, cc = _fault_campaign(tmp_path, "slow", time_s=60.0, max_tests=2, test_timeout=1.0)
    assert counters.verdicts == {"pass": 2} and counters.slow == 2 and counters.bugs_saved == 0, counters
    counters, cc = _fault_campaign(tmp_path / "hang", "hang", time_s=60.0, max_tests=1, test_timeout=1.0)
    assert counters.verdicts == {"timeout": 1} and counters.slow == 0 and counters.bugs_saved == 1, counters
    assert load_bug(cc.out / "0000").meta.flaky is False


@pytest.mark.slow
def test_nnfuzz_failing_to_build_a_model_in_the_sandbox_is_its_own_error_not_a_crash(tmp_path):
    counters, cc = _fault_campaign(tmp_path, "nnfuzzbuild", time_s=5.0, producers=0)
    assert counters.tests == 0 and counters.bugs_saved == 0 and counters.nnfuzz_errors >= 2, counters
    errors = [r for r in read_log(cc.out) if r.get("verdict") == "nnfuzz-error"]
    assert errors and "building the model failed: injected" in errors[0]["error"]


@pytest.mark.slow
def test_killing_the_campaign_leaves_no_half_written_bug_folder_and_no_process(tmp_path):
    out = tmp_path / "bugs"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
        from nnfuzz.generate.policy import GenPolicy
        run_campaign(CampaignConfig(backend="fault-cpu", backend_options={{"always": "wrong"}},
            backend_path={FAULT!r}, policy=GenPolicy(max_nodes=3, dtypes=["float32"], include={SAFE_OPS!r}),
            out=__import__("pathlib").Path({str(out)!r}), ui="plain", probe=False, time_s=120.0, producers=1))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and len([p for p in out.glob("[0-9]*")]) < 5:
        time.sleep(0.05)
    kids = descendants(proc.pid)  # the producer and the worker (in a session of its own)
    assert len(kids) >= 2, kids
    os.kill(proc.pid, signal.SIGKILL)  # the campaign alone, mid-stream: no chance to clean up
    proc.wait()
    end = time.monotonic() + 5.0
    while alive(kids) and time.monotonic() < end:
        time.sleep(0.05)
    left = alive(kids)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"still running 5 s after the campaign was killed: {left}"
    folders = sorted(p.name for p in out.iterdir() if p.is_dir() and p.name.isdigit())
    assert len(folders) >= 5
    assert folders == [f"{k:04d}" for k in range(len(folders))], "numbered without gaps"
    for name in folders:
        assert all((out / name / f).is_file() for f in REQUIRED + ("model.onnx", "gir.json", "err.log")), name
        load_bug(out / name)
    # a second campaign into the same store continues the numbering
    _fault_campaign(tmp_path, "wrong", time_s=60.0, max_tests=1)
    assert (out / f"{len(folders):04d}").is_dir()


def _has_cuda() -> bool:
    try:
        import tvm

        return bool(tvm.cuda().exist)
    except ImportError:
        return False


@pytest.mark.skipif(not _has_cuda(), reason="no usable CUDA GPU")
def test_tvm_gpu_smoke_campaign(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    assert main(["fuzz", "--json", "backend=tvm-gpu", "time=30s", f"fuzz.out={tmp_path / 'bugs'}", "ui=plain"]) == 0
    assert _summary(capsys)["tests"] > 0


@pytest.mark.slow
def test_unavailable_and_unknown_backends_fail_before_the_campaign(tmp_path, capsys):
    if not _has_cuda():
        assert main(["fuzz", "backend=tvm-gpu", "time=10s", f"fuzz.out={tmp_path}"]) == 2
        assert "GPU" in capsys.readouterr().err
    assert main(["fuzz", "backend=nope", "time=10s"]) == 2
    assert "ort-cpu" in capsys.readouterr().err
    assert main(["fuzz", "time=soon"]) == 2
    assert "soon" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
