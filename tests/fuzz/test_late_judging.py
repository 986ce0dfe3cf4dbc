"""A bug found in a campaign's last second is judged as one found in its first (fuzz/context.py
``Clock.judging``): a tf-cpu smoke campaign once saved an inconsistency found 0.03 s before its time bound,
unlocalized, that replay judged rounding noise (the localization's run was refused: the time was up)."""
import json
import threading

from fake_backends import fake_campaign, folders

from nnfuzz.fuzz.context import JUDGING_RUNS, Clock


def test_an_inconsistency_found_as_time_runs_out_is_still_localized(tmp_path):
    # the test's compile passes the 1-s bound and its run is off by one: the bug is saved localized at
    # the first node (the exposed run past the bound, within the grace), as it would be at any other time
    counters, _ = fake_campaign(tmp_path / "bugs", {"always": "wrong", "late_s": 1.5}, backend="FakeLateBackend",
                                time_s=1.0, max_tests=1)
    (folder,) = folders(tmp_path / "bugs")
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["blame"] == "system-under-test" and meta["root_cause"]["method"] == "local-error", meta
    assert meta["first_divergent_node"]["index"] == 0 and "unlocalized" not in meta["signature"], meta


def test_the_grace_is_the_judging_threads_alone():
    clock = Clock(-1.0, test_timeout=2.0)  # a second past its bound
    seen = []
    with clock.judging():
        inside = clock.left()
        t = threading.Thread(target=lambda: seen.append(clock.left()))
        t.start()
        t.join()
    assert JUDGING_RUNS * 2.0 - 1.1 < inside <= JUDGING_RUNS * 2.0 - 1.0
    assert seen[0] < 0 and clock.left() < 0
