"""Stopping a campaign: SIGTERM, SIGHUP and Ctrl-C end it cleanly (no process of it left, the bug store
whole, the summary printed, exit code 130); test_campaign.py kills one outright (SIGKILL) and finds its
children gone too. And the seed: fresh per campaign unless given, recorded in campaign.jsonl and every
meta.json."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
from nnfuzz.fuzz.stopping import EXIT_CODE
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.triage.bugstore import REQUIRED, load_bug
from nnfuzz.fuzz.runlog import read_log
from procs import alive, descendants

pytestmark = pytest.mark.xdist_group("ray")  # one Ray on the machine at a time (pyproject: --dist loadgroup)

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
SAFE_OPS = ["Relu", "Add", "Mul", "Sigmoid", "Tanh", "Transpose"]


def _log(out: Path, whole: bool = True) -> list:
    """The campaign log's records (fuzz/runlog.py); ``whole``: every line whole (else a line being
    written is left out)."""
    problems = []
    log = list(read_log(out, problems))
    assert not (whole and problems), problems
    return log


def _wait_until_testing(proc, out: Path, errfile: Path) -> None:
    end = time.monotonic() + 240  # start-up: torch, a producer and an ORT worker on a busy machine
    while not any("verdict" in r for r in _log(out, whole=False)):
        assert proc.poll() is None, f"the campaign ended early ({proc.returncode}): {errfile.read_text()[-3000:]}"
        assert time.monotonic() < end, f"no test logged; stderr: {errfile.read_text()[-3000:]}"
        time.sleep(0.2)


RAY = ["fuzz.executor=ray", "fuzz.workers=1", "ray.address=null"]  # a Ray the campaign starts, and ends


@pytest.mark.parametrize("sig, whole_group, extra", [
    (signal.SIGTERM, False, []),   # kill -TERM <pid>
    (signal.SIGHUP, False, []),    # kill -HUP <pid>
    (signal.SIGINT, True, []),     # Ctrl-C: the terminal signals the whole foreground process group
    pytest.param(signal.SIGTERM, False, RAY, marks=pytest.mark.slow),  # Ray's processes and actors too
    pytest.param(signal.SIGINT, True, RAY, marks=pytest.mark.slow),
], ids=["kill-TERM", "kill-HUP", "ctrl-C", "kill-TERM-ray", "ctrl-C-ray"])
@pytest.mark.slow
def test_a_signal_ends_the_campaign_and_every_process_of_it(tmp_path, sig, whole_group, extra):
    pytest.importorskip("onnxruntime")
    if extra:
        pytest.importorskip("ray")
    out = tmp_path / "bugs"
    outfile, errfile = tmp_path / "stdout", tmp_path / "stderr"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "nnfuzz.cli", "fuzz", "--json", "backend=ort-cpu", "time=2m", f"fuzz.out={out}",
           "ui=plain", "fuzz.probe=false", "fuzz.producers=1", "mgen.max_nodes=4", "fuzz.workers=2", *extra]
    with open(outfile, "w") as fo, open(errfile, "w") as fe:
        proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, env=env, cwd=tmp_path,
                                start_new_session=True)
    kids = {}
    try:
        _wait_until_testing(proc, out, errfile)
        kids = descendants(proc.pid)
        assert len(kids) >= 2, kids  # the producer and the sandbox workers (and multiprocessing's tracker; Ray's)
        if whole_group:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        bound = 30.0 if extra else 5.0  # Ray's shutdown ends its own daemons
        end = time.monotonic() + bound
        while (proc.poll() is None or alive(kids)) and time.monotonic() < end:
            time.sleep(0.05)
        assert proc.poll() is not None, f"the campaign still runs {bound:g} s after the signal"
        assert not alive(kids), f"left running {bound:g} s after {sig.name}: {alive(kids)}"
    finally:
        for pid in alive(kids):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    check_store(out)
    err = errfile.read_text()
    assert proc.returncode == EXIT_CODE, err[-3000:]
    summary = json.loads(outfile.read_text().strip().splitlines()[-1])
    assert summary["stopped"] == sig.name and summary["tests"] >= 1, summary
    assert f"{sig.name}: stopping the campaign" in err
    log = _log(out)
    assert log[0]["campaign"]["seed"] == summary["seed"] and isinstance(summary["seed"], int)
    assert f"seed {summary['seed']}: rerun with mgen.seed={summary['seed']}" in err
    assert log[-1]["campaign_end"] == {"stopped": sig.name, "tests": summary["tests"], "lost": 0}
    assert 0 < log[-1]["t"] <= 120  # seconds into the campaign (every line says when it was written)
    assert sum("verdict" in r and r["verdict"] != "no-graph" for r in log) >= summary["tests"]


def check_store(out: Path) -> None:
    """Every bug folder complete, numbered without gaps, no temporary folder left, every log line whole."""
    names = sorted(p.name for p in out.iterdir())
    folders = [n for n in names if n.isdigit()]
    assert folders == [f"{k:04d}" for k in range(len(folders))]
    # the log, the seeds tested (fuzz/resume.py) and the coverage guide's state (generate/guide.py)
    assert [n for n in names if n not in folders] == ["campaign.jsonl", "campaign.minutes.jsonl", "campaign_state.json",
                                                             "guide_state.json"], names
    for name in folders:
        assert all((out / name / f).is_file() for f in REQUIRED + ("model.onnx", "gir.json", "err.log")), name
        assert isinstance(load_bug(out / name).meta.policy["seed"], int)
    _log(out)  # raises on a half-written line


def _fault_campaign(out: Path, seed, **kw):
    sys.path.insert(0, str(HERE))
    cc = CampaignConfig(backend="fault-cpu", backend_options={"always": "wrong"},
                        backend_path="fault_backend:FaultBackend", out=out, ui="plain", probe=False,
                        policy=GenPolicy(seed=seed, max_nodes=4, dtypes=["float32"], include=SAFE_OPS),
                        time_s=60.0, max_tests=2, rerun=False, **{"reduce": False, **kw})  # bugs as saved
    run_campaign(cc)
    metas = [load_bug(p).meta for p in sorted(out.iterdir()) if p.name.isdigit()]
    return _log(out)[0]["campaign"]["seed"], metas


@pytest.mark.slow
def test_each_campaign_draws_its_seed_and_a_given_seed_reproduces(tmp_path, capsys):
    seeds = []
    for k in range(2):
        seed, metas = _fault_campaign(tmp_path / f"drawn{k}", None)
        assert isinstance(seed, int) and len(metas) == 2  # every test of the "wrong" backend is a bug
        assert [m.policy["seed"] for m in metas] == [seed, seed]
        assert sorted(m.seed for m in metas) == [seed, seed + 1]
        assert f"seed {seed}: rerun with mgen.seed={seed}" in capsys.readouterr().err
        seeds.append(seed)
    assert seeds[0] != seeds[1]
    # the first campaign again, from its printed seed: the same graphs
    seed, metas = _fault_campaign(tmp_path / "again", seeds[0])
    assert seed == seeds[0] and [m.policy["seed"] for m in metas] == [seed, seed]
    for name in ("0000", "0001"):
        assert (tmp_path / "again" / name / "gir.json").read_text() == \
            (tmp_path / "drawn0" / name / "gir.json").read_text()


def test_the_command_line_leaves_the_seed_to_the_campaign_unless_given():
    from nnfuzz.commands.fuzz import campaign_config
    from nnfuzz.config import load_config

    assert campaign_config(load_config([])).policy.seed is None  # drawn by run_campaign
    assert campaign_config(load_config(["mgen.seed=7"])).policy.seed == 7


def test_a_stop_signal_waits_for_a_safe_point_unless_repeated():
    from nnfuzz.fuzz.stopping import Stopped, StopRequest

    before = signal.getsignal(signal.SIGTERM)  # (SIG_DFL, or what an earlier test's ray.init installed)
    stop = StopRequest()
    with stop.on_signals():
        assert signal.getsignal(signal.SIGTERM) is not before
        os.kill(os.getpid(), signal.SIGTERM)  # Python runs the handler before the next line
        assert stop.name == "SIGTERM"         # asked for, not raised: this code may be mid-write
        with pytest.raises(Stopped, match="SIGTERM"):
            stop.check()                      # the next safe point
        with pytest.raises(Stopped):
            with stop.interruptible():
                pass
        with pytest.raises(Stopped, match="SIGHUP"):
            os.kill(os.getpid(), signal.SIGHUP)  # a second signal: at once
    assert signal.getsignal(signal.SIGTERM) is before  # the handlers are given back
    stop = StopRequest()
    with stop.on_signals(), pytest.raises(Stopped, match="SIGINT"):
        with stop.interruptible():  # making a model: nothing to leave half-written
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)


@pytest.mark.slow
def test_a_stopped_campaign_leaves_the_bug_in_reduction_as_saved(tmp_path):
    import threading

    from nnfuzz.fuzz.reducer import BackgroundReducer
    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.fuzz.stopping import StopRequest

    _fault_campaign(tmp_path / "bugs", 3)
    bug = tmp_path / "bugs" / "0000"
    before = {p.name: p.read_bytes() for p in bug.iterdir()}
    stop, notes = StopRequest(), []
    stop.request(signal.SIGTERM)  # the campaign is stopping when the reducer gets to the bug

    def make_sandbox(system, options):
        return Sandbox(system, options, backend_path="fault_backend:FaultBackend", stop=stop)

    reducer = BackgroundReducer(make_sandbox, {}, 30.0, time.monotonic() + 60, threading.Lock(), notes.append,
                                lambda s: None)
    reducer.submit(bug)
    reducer.close()  # returns: a stop is no error of the reducer's
    assert reducer.results == [] and reducer.error is None
    assert {p.name: p.read_bytes() for p in bug.iterdir()} == before


@pytest.mark.slow
def test_the_campaigns_end_taking_the_reducers_worker_is_no_failure_of_the_bug(tmp_path):
    """At the campaign's time bound its workers go, the reducer's too, often while one starts: an inductor-gpu
    campaign then printed "reduce 0000: not-reduced NNFuzzError: the worker died while starting (killed by
    SIGKILL)" after its summary. Past the deadline the bug stays as saved, with no result and no note."""
    import threading

    from nnfuzz.errors import NNFuzzError
    from nnfuzz.fuzz.reducer import BackgroundReducer

    _fault_campaign(tmp_path / "bugs", 3)
    bug = tmp_path / "bugs" / "0000"
    before = {p.name: p.read_bytes() for p in bug.iterdir()}
    deadline, notes = time.monotonic() + 0.5, []

    def make_sandbox(system, options):
        time.sleep(max(0.0, deadline - time.monotonic()) + 0.1)  # the worker starts as the time runs out
        raise NNFuzzError(f"the {system} worker died while starting (killed by SIGKILL); it printed nothing")

    reducer = BackgroundReducer(make_sandbox, {}, 30.0, deadline, threading.Lock(), notes.append, lambda s: None)
    reducer.submit(bug)
    reducer.close()
    assert reducer.results == [] and reducer.error is None and notes == []
    assert {p.name: p.read_bytes() for p in bug.iterdir()} == before
