"""One store, two campaigns (fuzz/store_lock.py): the second is refused with the first one's pid and
host; a campaign killed outright (SIGKILL) leaves its lock, which the next one takes over with a
warning, and that next campaign resumes (fuzz/resume.py): numbering on, no seed tested twice, no saved
folder lost."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nnfuzz.fuzz.campaign import run_campaign
from nnfuzz.fuzz.resume import STATE_FILE
from nnfuzz.fuzz.runlog import read_log
from nnfuzz.fuzz.store_lock import LOCK_FILE, StoreLocked
from tests.fuzz.test_faults import SAFE_OPS, fault_campaign

ROOT = Path(__file__).parents[2]


def _start_cli_campaign(out: Path, tmp_path: Path, seed: int) -> subprocess.Popen:
    """A real campaign in a process of its own: the fault backend calls every test wrong (a bug each)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests" / "fuzz"),
                                                        os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "nnfuzz.cli", "fuzz", "backend=fault_backend:FaultBackend", "+backend.options.always=wrong",
           "time=3m", f"fuzz.out={out}", "ui=plain", "fuzz.probe=false",
           "fuzz.producers=0", "fuzz.workers=1", "fuzz.rerun=false", "fuzz.reduce=false", f"mgen.seed={seed}",
           "mgen.max_nodes=3", "mgen.dtypes=[float32]", f"mgen.include=[{','.join(SAFE_OPS)}]"]
    err = open(tmp_path / f"stderr-{seed}", "w")
    return subprocess.Popen(cmd, stdout=err, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=tmp_path,
                            start_new_session=True)


def _wait_for_bugs(proc, out: Path, n: int, tmp_path: Path) -> None:
    end = time.monotonic() + 180
    while len([p for p in out.glob("[0-9][0-9][0-9][0-9]")]) < n:
        errs = "".join(p.read_text()[-2000:] for p in tmp_path.glob("stderr-*"))
        assert proc.poll() is None, f"the campaign ended early ({proc.returncode}): {errs}"
        assert time.monotonic() < end, f"no {n} bugs saved in time: {errs}"
        time.sleep(0.2)


@pytest.mark.slow
def test_a_second_campaign_is_refused_then_a_killed_ones_store_is_taken_over_and_resumed(tmp_path, capsys):
    out = tmp_path / "bugs"
    first = _start_cli_campaign(out, tmp_path, seed=300)
    try:
        _wait_for_bugs(first, out, 3, tmp_path)
        holder = json.loads((out / LOCK_FILE).read_text())
        assert holder["pid"] == first.pid and holder["host"] == socket.gethostname()
        with pytest.raises(StoreLocked, match=f"in use by another campaign \\(pid {first.pid} on host "
                                              f"{socket.gethostname()}"):
            run_campaign(fault_campaign(out, seed=300, max_tests=1))
        time.sleep(5.5)  # past one write of campaign_state.json (fuzz/loop.py STATE_EVERY_S)
        os.killpg(first.pid, signal.SIGKILL)   # the campaign's main process (and its session) killed outright
        first.wait(10)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    saved = sorted(p.name for p in out.iterdir() if p.name.isdigit())
    tested_before = {r["seed"] for r in read_log(out) if "verdict" in r}
    state = json.loads((out / STATE_FILE).read_text())
    assert (out / LOCK_FILE).exists() and state["start_seed"] == 300

    capsys.readouterr()
    second = run_campaign(fault_campaign(out, seed=None, max_tests=4, workers=1))
    assert f"left locked by a campaign that ended without closing it (pid {first.pid}" in capsys.readouterr().err
    assert not (out / LOCK_FILE).exists(), "a campaign that ends cleanly removes its lock"
    folders = sorted(p.name for p in out.iterdir() if p.name.isdigit())
    assert folders[: len(saved)] == saved, "a saved folder was lost"
    assert folders == [f"{i:04d}" for i in range(len(saved) + second.bugs_saved)], folders  # numbered on
    assert not [p for p in out.iterdir() if p.name.startswith(".0")], "a half-written folder was left"
    recs = list(read_log(out))
    seeds_after = [r["seed"] for r in recs if "verdict" in r][len([r for r in recs if "verdict" in r]) - second.tests:]
    recorded = {s for lo, hi in state["tested_seeds"] for s in range(lo, hi)}
    assert second.tests == 4 and not recorded & set(seeds_after), (sorted(recorded), seeds_after)
    assert min(seeds_after) >= 300 and recorded <= tested_before
