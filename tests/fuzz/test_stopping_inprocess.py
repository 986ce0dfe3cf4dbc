"""How a campaign ends, and what it leaves, on the in-process executor (``fuzz.executor=inprocess``)
with the test tier's fake backends (tests/fuzz/fake_backends.py): a stop signal during a run, the time
bound, campaign.jsonl's framing, the seed, a campaign resumed into the same store, and the `nnfuzz fuzz`
command's summary and exit code. Each campaign takes a fraction of a second; test_signals.py and
test_resume.py do the same with real processes (and real signals)."""
import json

import pytest
from fake_backends import SAFE_OPS, fake_campaign, folders, records

from nnfuzz.fuzz.resume import STATE_FILE
from nnfuzz.triage.bugstore import REQUIRED, load_bug

TESTED = ("pass", "unsupported", "crash", "inconsistency", "timeout")


def check_store(out) -> None:
    """Every bug folder complete, numbered without gaps, no temporary folder left, every log line whole."""
    names = sorted(p.name for p in out.iterdir())
    numbered = [n for n in names if n.isdigit()]
    assert numbered == [f"{k:04d}" for k in range(len(numbered))]
    assert [n for n in names if n not in numbered] == ["campaign.jsonl", "campaign.minutes.jsonl", STATE_FILE,
                                                              "guide_state.json"], names
    for name in numbered:
        assert all((out / name / f).is_file() for f in REQUIRED + ("model.onnx", "gir.json", "err.log")), name
        assert isinstance(load_bug(out / name).meta.policy["seed"], int)
    records(out)  # raises on a half-written line


def test_a_stop_signal_during_a_run_ends_the_campaign_cleanly(tmp_path, capsys):
    out = tmp_path / "bugs"
    counters, cc = fake_campaign(out, {"always": "stop", "after": 3}, max_tests=10)  # SIGTERM in the 4th run
    assert counters.stopped == "SIGTERM" and counters.tests == 3 and counters.verdicts == {"pass": 3}, counters
    assert "SIGTERM: stopping the campaign" in capsys.readouterr().err
    log = records(out)
    assert log[0]["campaign"]["seed"] == cc.policy.seed and log[0]["campaign"]["backend"] == "fake-cpu"
    assert log[-1]["campaign_end"] == {"stopped": "SIGTERM", "tests": 3, "lost": 0}
    assert sum(r.get("verdict") in TESTED for r in log) == 3  # the stopped test is not a verdict
    check_store(out)
    state = json.loads((out / STATE_FILE).read_text())
    assert state["start_seed"] == cc.policy.seed and state["campaigns"] == 1


def test_a_stop_in_one_lane_ends_every_lane_and_the_store_stays_whole(tmp_path):
    out = tmp_path / "bugs"
    # meet: the lanes' first compiles wait for each other, so both lanes test before the stop (under load one
    # lane once took every test)
    counters, _ = fake_campaign(out, {"always": "stop", "after": 4, "once": str(tmp_path), "meet": str(out)},
                                max_tests=50, workers=2, rerun=False)
    assert counters.stopped == "SIGTERM" and 4 <= counters.tests < 50 and counters.lost == 0, counters
    log = records(out)
    assert log[-1]["campaign_end"]["stopped"] == "SIGTERM" and log[-1]["campaign_end"]["tests"] == counters.tests
    assert {r["worker"] for r in log if r.get("verdict") in TESTED} == {"w0", "w1"}
    check_store(out)


def test_the_time_bound_cuts_a_hanging_run_short_and_ends_the_campaign(tmp_path):
    # the campaign's bound, not fuzz.test_timeout, ends each run: cut, not a timeout bug
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "hang"}, time_s=0.3, test_timeout=60.0)
    assert counters.tests == 0 and counters.bugs_saved == 0 and counters.stopped is None, counters
    log = records(cc.out)
    assert [r for r in log if r.get("verdict") == "cut"] and not [r for r in log if r.get("verdict") in TESTED]
    assert log[-1]["campaign_end"] == {"stopped": None, "tests": 0, "lost": 0}


def test_each_line_of_campaign_jsonl_says_when_and_each_test_line_what(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "wrong", "once": str(tmp_path)}, max_tests=3,
                                 oracle="reference")
    log = records(cc.out)
    first, last = log[0]["campaign"], log[-1]["campaign_end"]
    assert first["oracle"] == "reference" and first["time_s"] == 60.0 and first["nnfuzz"]
    assert last == {"stopped": None, "tests": 3, "lost": 0}
    assert all(isinstance(r["t"], (int, float)) and r["t"] >= 0 for r in log)
    tests = [r for r in log if r.get("verdict") in TESTED]
    assert [r["verdict"] for r in tests] == ["inconsistency", "pass", "pass"]
    assert [r["seed"] for r in tests] == [cc.policy.seed + k for k in range(3)]
    assert all(r["format"] == "onnx" and r["worker"] == "w0" for r in tests)
    assert tests[0]["stage"] == "verify" and tests[0]["bug"].endswith("0000") and "bug" not in tests[1]


def test_each_campaign_draws_its_seed_and_a_given_seed_reproduces(tmp_path, capsys):
    seeds = []
    for k in range(2):
        out = tmp_path / f"drawn{k}"
        _, cc = fake_campaign(out, {"always": "wrong"}, seed=None, max_tests=2, rerun=False)
        seed = records(out)[0]["campaign"]["seed"]
        metas = [load_bug(p).meta for p in folders(out)]
        assert isinstance(seed, int) and len(metas) == 2  # every test of the "wrong" backend is a bug
        assert [m.policy["seed"] for m in metas] == [seed, seed]
        assert sorted(m.seed for m in metas) == [seed, seed + 1]
        assert f"seed {seed}: rerun with mgen.seed={seed}" in capsys.readouterr().err
        seeds.append(seed)
    assert seeds[0] != seeds[1]
    fake_campaign(tmp_path / "again", {"always": "wrong"}, seed=seeds[0], max_tests=2, rerun=False)
    for name in ("0000", "0001"):  # the first campaign again, from its printed seed: the same graphs
        assert (tmp_path / "again" / name / "gir.json").read_text() == \
            (tmp_path / "drawn0" / name / "gir.json").read_text()


def test_a_restarted_campaign_continues_numbering_and_never_repeats_a_seed(tmp_path):
    out = tmp_path / "bugs"
    opts = {"always": "wrong"}
    first, _ = fake_campaign(out, opts, seed=100, max_tests=4, workers=2, rerun=False)
    assert first.tests == 4 and first.bugs_saved == 4
    seeds_a = {r["seed"] for r in records(out) if "verdict" in r}
    assert json.loads((out / STATE_FILE).read_text())["start_seed"] == 100
    second, _ = fake_campaign(out, opts, seed=None, max_tests=3, rerun=False)  # mgen.seed unset: goes on
    seeds_b = {r["seed"] for r in records(out) if "verdict" in r} - seeds_a
    assert second.tests == 3 and len(seeds_b) == 3 and min(seeds_b) > 100
    third, _ = fake_campaign(out, opts, seed=100, max_tests=2, rerun=False)  # the first campaign's seed again
    seeds = [r["seed"] for r in records(out) if "verdict" in r]
    assert third.tests == 2 and len(seeds) == len(set(seeds)), "a seed was tested twice"
    assert [p.name for p in folders(out)] == [f"{i:04d}" for i in range(9)]  # numbered on, without gaps
    assert json.loads((out / STATE_FILE).read_text())["campaigns"] == 3


def test_the_guide_state_is_kept_logged_and_resumed(tmp_path):
    from nnfuzz.fuzz.guidestate import FILE

    out = tmp_path / "bugs"
    counters, _ = fake_campaign(out, {"always": "wrong"}, max_tests=3, rerun=False)
    state = json.loads((out / FILE).read_text())
    assert state["graphs"] >= 3 and state["op_dtype"] and state["edges"] is not None
    unique = [p.name for p in folders(out) if load_bug(p).meta.duplicate_of is None]
    assert [t["bug"] for t in state["triggers"]] == unique and unique[0] == "0000"
    assert state["triggers"][0]["from"] == "saved"
    [g] = [r["guide"] for r in records(out) if "guide" in r]
    assert g["tests"] == counters.tests and g["op_dtype"] == len(state["op_dtype"]) > 0
    fake_campaign(out, {"always": "wrong"}, max_tests=2, rerun=False, seed=None)
    again = json.loads((out / FILE).read_text())
    assert again["graphs"] >= state["graphs"] + 2 and again["triggers"][0] == state["triggers"][0]


def test_a_corrupt_guide_state_stops_the_campaign_and_loses_nothing(tmp_path):
    from nnfuzz.fuzz.guidestate import FILE, GuideStateError

    out = tmp_path / "bugs"
    out.mkdir()
    (out / FILE).write_text("{truncated")
    with pytest.raises(GuideStateError, match="mgen.guide=none"):
        fake_campaign(out, {"always": "wrong"}, max_tests=1)
    assert (out / FILE).read_text() == "{truncated" and sorted(p.name for p in out.iterdir()) == [FILE]


def test_the_fuzz_command_stopped_by_a_signal_prints_its_summary_and_exits_130(tmp_path, capsys):
    from nnfuzz.cli import main
    from nnfuzz.fuzz.stopping import EXIT_CODE

    out = tmp_path / "bugs"
    assert main(["fuzz", "--json", "backend.name=fake_backends:FakeBackend", "+backend.options.always=stop",
                 "+backend.options.after=2", "fuzz.executor=inprocess", "fuzz.probe=false", "fuzz.producers=0", "fuzz.reduce=false",
                 "time=60s", f"fuzz.out={out}", "ui=plain", "mgen.max_nodes=4", f"mgen.include=[{','.join(SAFE_OPS)}]",
                 "mgen.dtypes=[float32]"]) == EXIT_CODE
    captured = capsys.readouterr()
    summary = json.loads(captured.out.strip().splitlines()[-1])
    assert summary["stopped"] == "SIGTERM" and summary["tests"] == 2 and summary["verdicts"] == {"pass": 2}
    assert summary["backend"] == "fake_backends:FakeBackend" and summary["workers"] == 1
    assert f"seed {summary['seed']}: rerun with mgen.seed={summary['seed']}" in captured.err
    assert records(out)[-1]["campaign_end"] == {"stopped": "SIGTERM", "tests": 2, "lost": 0}
