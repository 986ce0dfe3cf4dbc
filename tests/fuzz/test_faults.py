"""Faults on purpose (issue 30): a full disk while a bug folder is written, a corrupt probe cache, a
corrupt campaign state or dedup index. Each is met with a clean stop, a rebuild or a clear error."""
import errno
import json
import sys
from pathlib import Path

import pytest

from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
from nnfuzz.fuzz.diskfull import StoreFull
from nnfuzz.fuzz.runlog import read_log
from nnfuzz.generate.policy import GenPolicy

HERE = Path(__file__).parent
SAFE_OPS = ["Relu", "Add", "Mul", "Sigmoid", "Tanh", "Transpose"]


def fault_campaign(out: Path, seed=100, **kw) -> CampaignConfig:
    """A campaign on the fault backend that calls every test wrong (each one a bug to save)."""
    sys.path.insert(0, str(HERE))
    return CampaignConfig(backend="fault-cpu", backend_options={"always": "wrong"}, backend_path="fault_backend:FaultBackend",
                          policy=GenPolicy(max_nodes=3, dtypes=["float32"], include=SAFE_OPS, seed=seed), out=out,
                          ui="plain", time_s=60, rerun=False, **{"reduce": False, "probe": False, **kw})


@pytest.mark.slow
def test_a_full_disk_stops_the_campaign_cleanly_with_no_half_folder(tmp_path, monkeypatch):
    import nnfuzz.triage.bugstore as bugstore

    out = tmp_path / "bugs"
    real = bugstore.write_bytes

    def filling(data):  # the disk fills once the first folder is saved: the second is cut half-way
        def write(path):
            if (out / "0000").exists():
                path.write_bytes(data[: len(data) // 2])
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
            real(data)(path)
        return write

    monkeypatch.setattr(bugstore, "write_bytes", filling)
    with pytest.raises(StoreFull) as e:
        run_campaign(fault_campaign(out, max_tests=5, workers=1))
    assert str(out) in str(e.value) and "full" in str(e.value) and "No space left" in str(e.value)
    entries = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert entries == ["0000"], entries  # no half folder, no hidden temporary one
    recs = list(read_log(out))
    assert [r for r in recs if "campaign_end" in r], "the campaign did not close its log"
    assert (out / "campaign_state.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_corrupt_probe_cache_is_probed_again_with_a_warning(tmp_path, monkeypatch, capsys, damage):
    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    run_campaign(fault_campaign(tmp_path / "a", probe=True, max_tests=1, workers=1))
    caches = sorted((tmp_path / "cache" / "probe").glob("*.json"))
    assert caches, "the first campaign wrote no probe cache"
    for f in caches:
        text = f.read_text()
        f.write_text(text[: len(text) // 2] if damage == "truncated" else '{"Relu": ["not", "a row map"]}')
    capsys.readouterr()
    counters = run_campaign(fault_campaign(tmp_path / "b", probe=True, max_tests=1, workers=1))
    err = capsys.readouterr().err
    assert counters.tests == 1
    for f in caches:
        assert f"the probe cache {f} is unreadable" in err
        json.loads(f.read_text())  # probed again and rewritten whole


@pytest.mark.slow
def test_a_worker_killed_mid_compile_is_replaced_and_the_run_made_again():
    """SIGKILL from outside (the OOM killer, a user) while the worker compiles: a fresh worker makes the
    run again and the test has its real result, not a crash of the system under test. (The fault
    backend's ``slow@compile`` holds the worker in its compile stage long enough to be killed there.)"""
    import os
    import signal
    import threading

    import numpy as np

    from nnfuzz.fuzz.sandbox import Sandbox
    from tests.fuzz.fault_backend import fault_model

    x = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], np.float32)
    with Sandbox("fault-cpu", backend_path="tests.fuzz.fault_backend:FaultBackend", test_timeout=20.0,
                 memory_limit_mb=300) as sb:
        sb.start()
        first = sb.pid
        killer = threading.Timer(1.0, os.kill, (first, signal.SIGKILL))
        killer.start()
        r = sb.run(fault_model("slow@compile", slow_s=2.5), {"x": x})
        killer.join()
        assert (r.status, r.signal) == ("ok", None), (r.error, r.detail)
        np.testing.assert_array_equal(r.outputs["y"], np.maximum(x, 0))
        assert sb.killed_retries == 1 and sb.pid not in (None, first) and sb.workers_started == 2
        assert r.seconds["killed_retry"] > 0.5


@pytest.mark.slow
def test_a_corrupt_dedup_index_is_rebuilt_from_the_folders(tmp_path):
    """The campaign's dedup index is built from the bug folders themselves (triage/dedup.py
    index_store); index.json (written by ``nnfuzz dedup``) is never read back, so garbage there changes
    nothing: the next campaign still knows every signature of the store."""
    out = tmp_path / "bugs"
    first = run_campaign(fault_campaign(out, max_tests=2, workers=1))
    assert first.bugs_saved == 2 and first.unique_bugs >= 1
    (out / "index.json").write_text('{"rows": [{"id": "0000", "signat')
    second = run_campaign(fault_campaign(out, max_tests=1, workers=1))
    assert second.tests == 1 and second.unique_bugs >= first.unique_bugs


def test_no_time_bound_reads_the_wall_clock():
    """Time bounds are on the monotonic clock: a wall-clock jump (NTP, a suspended laptop, a user's
    ``date -s``) neither ends a campaign early nor lets it run past its bound. (The campaign's code,
    nnfuzz/fuzz/, reads the wall clock only for the dates it writes: time.gmtime, time.strftime.)"""
    root = Path(__file__).parents[2] / "nnfuzz" / "fuzz"
    offenders = [f"{p.relative_to(root)}:{i}" for p in root.rglob("*.py")
                 for i, line in enumerate(p.read_text().splitlines(), 1) if "time.time()" in line]
    assert offenders == [], f"time.time() in {offenders}: use time.monotonic() for deadlines"
