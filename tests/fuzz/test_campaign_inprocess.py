"""Campaign accounting and saving on the in-process executor (``fuzz.executor=inprocess``) with the test
tier's fake backends (tests/fuzz/fake_backends.py): verdicts counted, bugs saved whole and numbered,
deduplicated, re-run (flaky), max_tests held across lanes. Each campaign takes a fraction of a second;
test_campaign.py and test_workers.py run campaigns on real worker processes."""
import pytest
from fake_backends import fake_campaign, folders, met, records

from nnfuzz.triage.bugstore import REQUIRED, load_bug

TESTED = ("pass", "unsupported", "crash", "inconsistency", "timeout")


def _tested(out) -> list:
    return [r for r in records(out) if r.get("verdict") in TESTED]


@pytest.mark.parametrize("fault, symptom", [("crash", "crash"), ("raise", "crash"), ("wrong", "inconsistency"),
                                            ("oom", "crash"), ("hang", "timeout")])
def test_faults_become_saved_bugs_and_the_campaign_goes_on(tmp_path, fault, symptom):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": fault}, max_tests=3)
    assert counters.tests == 3 and counters.verdicts == {symptom: 3}, dict(counters.verdicts)
    bugs = folders(cc.out)
    assert [p.name for p in bugs] == ["0000", "0001", "0002"] and counters.bugs_saved == 3
    for p in bugs:
        assert all((p / f).is_file() for f in REQUIRED + ("model.onnx", "gir.json", "err.log")), p
    meta = load_bug(bugs[0]).meta
    assert meta.symptom == symptom and meta.flaky is False and meta.system == "fake-cpu"
    assert meta.version == "1.0-fake" and meta.version_id.startswith("fake+numpy")
    assert meta.signal == (11 if fault == "crash" else None)
    assert counters.flaky == 0 and counters.slow == 0 and counters.nnfuzz_errors == 0
    assert [r["bug"] for r in _tested(cc.out)] == [str(p) for p in bugs]


def test_unsupported_is_not_a_bug_but_nan_outputs_are(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "unsupported"}, max_tests=3)
    assert counters.verdicts == {"unsupported": 3} and counters.bugs_saved == 0 and not folders(cc.out)
    assert all("NOT_IMPLEMENTED" in r["why"] for r in _tested(cc.out))  # each record says why (the system's words)
    counters, cc = fake_campaign(tmp_path / "nan", {"always": "nan"}, max_tests=2)
    assert counters.verdicts == {"inconsistency": 2} and counters.bugs_saved == 2


def test_a_timeout_that_ends_given_more_time_is_slow_not_a_bug(tmp_path):
    counters, _ = fake_campaign(tmp_path / "slow", {"always": "slow", "slow_s": 2.0}, max_tests=2, test_timeout=1.0)
    assert counters.verdicts == {"pass": 2} and counters.slow == 2 and counters.bugs_saved == 0, counters
    counters, cc = fake_campaign(tmp_path / "hang", {"always": "hang"}, max_tests=1, test_timeout=1.0)
    assert counters.verdicts == {"timeout": 1} and counters.slow == 0 and counters.bugs_saved == 1, counters
    assert load_bug(cc.out / "0000").meta.flaky is False


def test_a_fault_that_does_not_repeat_is_saved_as_flaky(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "crash", "once": str(tmp_path)}, max_tests=3)
    assert counters.verdicts == {"crash": 1, "pass": 2} and counters.flaky == 1 and counters.bugs_saved == 1
    assert load_bug(cc.out / "0000").meta.flaky is True
    counters, cc = fake_campaign(tmp_path / "norerun", {"always": "crash", "once": str(tmp_path / "n")},
                                 max_tests=1, rerun=False)
    assert counters.flaky == 0 and load_bug(cc.out / "0000").meta.flaky is False  # not re-run: not judged


def test_nnfuzz_failing_to_build_a_model_in_the_sandbox_is_its_own_error_not_a_crash(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "nnfuzzbuild"}, time_s=0.5)
    assert counters.tests == 0 and counters.bugs_saved == 0 and counters.nnfuzz_errors >= 2, counters
    errors = [r for r in records(cc.out) if r.get("verdict") == "nnfuzz-error"]
    assert len(errors) == counters.nnfuzz_errors and "building the model failed: injected" in errors[0]["error"]
    assert counters.last_error.endswith("building the model failed: injected")


def test_duplicates_are_marked_within_and_across_campaigns(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "raise"}, max_tests=3, rerun=False)
    metas = [load_bug(b).meta for b in folders(cc.out)]
    assert [m.duplicate_of for m in metas] == [None, "0000", "0000"]
    assert len({m.signature for m in metas}) == 1 and "crash" in metas[0].signature
    assert counters.new_unique == 1 and counters.unique_bugs == 1
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "raise"}, max_tests=1, rerun=False, seed=50,
                                 keep_per_signature=0)  # (every example saved: test_known_bugs.py holds the limit)
    assert counters.new_unique == 0 and counters.unique_bugs == 1
    assert load_bug(cc.out / "0003").meta.duplicate_of == "0000"


def test_an_inconsistency_is_localized_and_its_value_search_recorded(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "wrong"}, max_tests=2)
    tested = _tested(cc.out)
    assert len(tested) == 2 and all(r["search"]["ok"] is True and r["search"]["ms"] >= 0 for r in tested)
    assert all({"search", "compile", "execute"} <= set(r["seconds"]) for r in tested)
    meta = load_bug(cc.out / "0000").meta
    assert meta.search["ok"] is True and meta.search["blocker"] is None and counters.seconds["search"] > 0
    # every value the "wrong" backend returns is off by one: the first node diverges, and the numpy
    # reference sides with torch
    assert meta.first_divergent_node["index"] == 0 and meta.blame == "system-under-test", meta
    assert meta.float64_twin is not None and counters.seconds["triage"] > 0
    counters, cc = fake_campaign(tmp_path / "off", {"always": "wrong"}, max_tests=1, search=None)
    assert load_bug(cc.out / "0000").meta.search is None


@pytest.mark.parametrize("workers", [1, 3])
def test_max_tests_holds_however_many_lanes_claim_tests(tmp_path, workers):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "wrong"}, max_tests=5, workers=workers, rerun=False)
    tested = _tested(cc.out)
    assert counters.tests == len(tested) == 5 and counters.workers == workers, counters
    assert counters.verdicts == {"inconsistency": 5} and counters.formats == {"onnx": 5}
    seeds = [r["seed"] for r in tested]
    assert len(set(seeds)) == 5, "a seed was tested twice"
    assert {r["worker"] for r in tested} <= {f"w{k}" for k in range(workers)}
    assert all(r["began"] <= r["ended"] for r in tested)


def test_max_tests_holds_while_every_lane_is_mid_test(tmp_path):
    """Three lanes, each compile waiting for the other two: the first three tests run at once, and then
    only two lanes may take a model (their wait ends alone), so five tests are run, never six."""
    counters, cc = fake_campaign(tmp_path / "bugs", {"meet": str(tmp_path), "parties": 3}, max_tests=5, workers=3)
    assert counters.tests == len(_tested(cc.out)) == 5 and counters.verdicts == {"pass": 5}, counters
    assert met(str(tmp_path)) == 3  # the three lanes were mid-test at once


def test_each_bug_is_written_once_and_numbered_without_gaps_with_two_lanes(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "wrong"}, max_tests=10, workers=2, rerun=False)
    saved = [r["bug"] for r in records(cc.out) if "bug" in r]
    names = [p.name for p in folders(cc.out)]
    assert len(saved) == len(set(saved)) == counters.bugs_saved == len(names) == 10
    assert names == [f"{i:04d}" for i in range(10)]
    originals = {}
    for name in names:  # one original per signature, however the lanes raced to save
        m = load_bug(cc.out / name).meta
        if m.duplicate_of is None:
            assert m.signature not in originals, f"{name} and {originals[m.signature]} both claim {m.signature}"
            originals[m.signature] = name
        else:
            assert originals[m.signature] == m.duplicate_of
    assert len(originals) == counters.new_unique


def test_a_crash_in_one_lane_leaves_the_other_lanes_tests_alone(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "crash", "once": str(tmp_path)}, max_tests=8,
                                 workers=2)
    tested = _tested(cc.out)
    crashed = [r for r in tested if r["verdict"] == "crash"]
    assert len(crashed) == 1 and counters.verdicts == {"crash": 1, "pass": 7}, [r["verdict"] for r in tested]
    assert counters.lost == 0 and counters.tests == len(tested) == 8
    assert not [r for r in records(cc.out) if r.get("verdict") in ("cut", "lost", "nnfuzz-error")]
    bug = load_bug(crashed[0]["bug"])  # saved once, flaky: its re-run found no fault
    assert bug.meta.symptom == "crash" and bug.meta.flaky and counters.bugs_saved == 1


def test_probing_leaves_out_the_ops_the_system_has_no_kernel_for(tmp_path, monkeypatch):
    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    counters, cc = fake_campaign(tmp_path / "bugs", {"lacks": ["Tanh"]}, probe=True, max_tests=6)
    plan = records(cc.out)[0]["campaign"]["plan"]
    assert plan["probed"] and plan["probed_rows"]["Tanh"] == 0 and plan["probed_rows"]["Relu"] == 1
    assert "Tanh" not in plan["ops"] and "Relu" in plan["ops"]
    assert counters.verdicts == {"pass": 6}  # no model holds an op the system cannot run
    assert not any("Tanh" in r["ops"] for r in _tested(cc.out))
