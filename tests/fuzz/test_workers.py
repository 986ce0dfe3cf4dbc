"""``fuzz.workers=N``: N sandboxes test at once (fuzz/pool.py), a crash in one leaves the others' tests
alone, and the campaign process alone writes each bug once (fuzz/saving.py under the campaign's lock)."""
import sys
from pathlib import Path

import pytest

from nnfuzz.errors import ConfigError
from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
from nnfuzz.fuzz.sizing import auto_workers, parse_workers, thread_env
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.triage.bugstore import load_bug
from nnfuzz.fuzz.runlog import read_log

HERE = Path(__file__).parent
FAULT = "fault_backend:FaultBackend"
SAFE_OPS = ["Relu", "Add", "Mul", "Sigmoid", "Tanh", "Transpose"]  # finite reference outputs every time


def _log(out: Path) -> list:
    return list(read_log(out))


def _tests(out: Path) -> list:
    return [r for r in _log(out) if r.get("verdict") in ("pass", "unsupported", "crash", "inconsistency", "timeout")]


def _fault(tmp_path, options, **kw):
    sys.path.insert(0, str(HERE))
    cc = CampaignConfig(backend="fault-cpu", backend_options=options, backend_path=FAULT,
                        policy=GenPolicy(max_nodes=3, dtypes=["float32"], include=SAFE_OPS, seed=11),
                        out=tmp_path / "bugs", ui="plain", probe=False, **{"reduce": False, **kw})
    return run_campaign(cc), cc.out


def _overlap(a: dict, b: dict) -> bool:
    return a["began"] < b["ended"] and b["began"] < a["ended"]


@pytest.mark.slow
def test_two_workers_on_ort_run_tests_at_the_same_time(tmp_path):
    pytest.importorskip("onnxruntime")
    cc = CampaignConfig(backend="ort-cpu", backend_options={}, out=tmp_path / "bugs", ui="plain", probe=False,
                        policy=GenPolicy(max_nodes=4, seed=5), time_s=40, max_tests=40, producers=2, workers=2,
                        reduce=False)
    counters = run_campaign(cc)
    assert counters.workers == 2 and counters.tests >= 10, counters
    tests = _tests(cc.out)
    by = {w: [r for r in tests if r["worker"] == w] for w in ("w0", "w1")}
    assert by["w0"] and by["w1"], {w: len(v) for w, v in by.items()}
    assert any(_overlap(a, b) for a in by["w0"] for b in by["w1"]), "no test of w0 overlapped one of w1"
    seeds = [r["seed"] for r in tests]
    assert len(seeds) == len(set(seeds)), "a seed was tested twice"


@pytest.mark.slow
def test_two_workers_compile_at_once(tmp_path):
    # each worker's first compile waits until another worker compiles too: alone, it would fail
    counters, out = _fault(tmp_path, {"always": "rendezvous", "meet": str(tmp_path / "meet")},
                           time_s=60, max_tests=6, workers=2, producers=1)
    assert counters.verdicts == {"pass": counters.tests} and counters.tests >= 2, counters
    assert len(list((tmp_path / "meet").iterdir())) == 2  # two worker processes met


@pytest.mark.slow
def test_a_crash_in_one_worker_leaves_the_other_workers_tests_alone(tmp_path):
    counters, out = _fault(tmp_path, {"always": "segfault", "once": str(tmp_path / "once")},
                           time_s=60, max_tests=12, workers=2, producers=1)
    tests = _tests(out)
    crashed = [r for r in tests if r["verdict"] == "crash"]
    assert len(crashed) == 1, [r["verdict"] for r in tests]
    others = [r for r in tests if r is not crashed[0]]
    assert others and all(r["verdict"] == "pass" for r in others), [r["verdict"] for r in others]
    other_lane = {"w0": "w1", "w1": "w0"}[crashed[0]["worker"]]
    assert any(r["worker"] == other_lane for r in others)  # the other lane went on testing, unharmed
    assert counters.lost == 0 and counters.tests == len(tests)
    assert not [r for r in _log(out) if r.get("verdict") in ("cut", "lost", "nnfuzz-error")]
    bug = load_bug(Path(crashed[0]["bug"]))  # saved once, flaky: its re-run found no fault
    assert bug.meta.symptom == "crash" and bug.meta.flaky and counters.bugs_saved == 1


@pytest.mark.slow
def test_each_bug_is_written_once_and_numbered_without_gaps(tmp_path):
    counters, out = _fault(tmp_path, {"always": "wrong"}, time_s=60, max_tests=10, workers=2, producers=1,
                           rerun=False)
    saved = [r["bug"] for r in _log(out) if "bug" in r]
    folders = sorted(p.name for p in out.iterdir() if p.is_dir() and p.name.isdigit())
    assert len(saved) == len(set(saved)) == counters.bugs_saved == len(folders) >= 2
    assert folders == [f"{i:04d}" for i in range(len(folders))]
    metas = [load_bug(out / f).meta for f in folders]
    originals = {}
    for f, m in zip(folders, metas):  # one original per signature, however the lanes raced to save
        if m.duplicate_of is None:
            assert m.signature not in originals, f"{f} and {originals[m.signature]} both claim {m.signature}"
            originals[m.signature] = f
    assert len(originals) == counters.new_unique
    assert all(originals[m.signature] == m.duplicate_of for m in metas if m.duplicate_of is not None)


def test_workers_key_is_checked_and_auto_fits_the_machine():
    assert parse_workers("auto") == "auto" and parse_workers(3) == 3
    for bad in (0, -1, "two", True, 1.5):
        with pytest.raises(ConfigError, match="fuzz.workers="):
            parse_workers(bad)
    import os

    cores = len(os.sched_getaffinity(0))
    assert auto_workers(1, "cpu", 1) == cores
    assert auto_workers(cores, "cpu", 1) == 1
    assert auto_workers(1, "gpu", 1) == 1
    assert auto_workers(1, "cpu", 1 << 40) == 1  # memory holds less than one worker: still one
    env = thread_env(cores)
    assert env["NNFUZZ_WORKER_THREADS"] == env["TVM_NUM_THREADS"] == env["OMP_NUM_THREADS"] == "1"


@pytest.mark.slow
def test_reruns_and_reduction_work_with_two_workers(tmp_path):
    counters, out = _fault(tmp_path, {"always": "wrong"}, time_s=90, max_tests=3, workers=2, producers=1,
                           reduce=True, reduce_s=20.0)
    assert counters.bugs_saved >= 3 and counters.flaky == 0  # each re-run found it again
    metas = [load_bug(p).meta for p in sorted(out.iterdir()) if p.name.isdigit()]
    assert counters.reduced == counters.new_unique >= 1, counters
    assert all(m.reduced is None for m in metas if m.duplicate_of)  # duplicates are left as saved
