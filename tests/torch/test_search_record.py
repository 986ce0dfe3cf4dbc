"""A value search's record (materialize/search_record.py): what a producer writes before each search
replays (materialize/search_replay.py), in a process of its own, as the same search; a dead producer's
record goes into the store."""
import multiprocessing as mp
import subprocess
import sys

import numpy as np
import pytest
from graphs import chain

from nnfuzz.fuzz.producer_watch import Slots, death_record
from nnfuzz.materialize import search_record, search_replay
from nnfuzz.materialize.model import random_values
from nnfuzz.materialize.search import SearchConfig, ValueSearch
from nnfuzz.ops.elementwise import spec as E


def _recorded_search(tmp_path, monkeypatch):
    """log(sqrt(sin(x))) from random values (unsafe), searched by gradient steps with a record kept."""
    gir = chain(E.Sin(), E.Sqrt(), E.Log(), shape=(64,))
    weights, inputs = random_values(gir, np.random.default_rng(7))
    assert (np.sin(inputs["x"]) <= 0).any(), "the search should have something to fix"
    file = tmp_path / f"producer-0{search_record.SUFFIX}"
    monkeypatch.setattr(search_record, "path", file)
    res = ValueSearch(gir, SearchConfig(time_ms=5000, starts=1)).run(weights, inputs, 11, unsafe=True)
    assert res.ok and res.steps > 0, res.summary()
    return file, res


@pytest.mark.slow
def test_a_recorded_search_replays_as_the_same_search_in_a_process_of_its_own(tmp_path, monkeypatch):
    file, res = _recorded_search(tmp_path, monkeypatch)
    out = subprocess.run([sys.executable, "-m", "nnfuzz.materialize.search_replay", str(file)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Sqrt" in out.stdout and "Log" in out.stdout  # the graph, printed before the search
    assert (f"the search ended: ok=True steps={res.steps} restarts={res.restarts} draws={res.draws}"
            in out.stdout), out.stdout


def test_forget_removes_the_last_models_record_and_a_bad_file_gets_a_clear_error(tmp_path, monkeypatch):
    file, _ = _recorded_search(tmp_path, monkeypatch)
    search_record.forget()
    assert not file.exists()
    search_record.forget()  # nothing to remove: no error
    file.write_bytes(b"not a pickle")
    with pytest.raises(SystemExit, match="is not a value search's record"):
        search_replay.replay(file)
    assert search_replay.main(["x.txt"]) == 2


def test_a_dead_producers_search_record_is_moved_into_the_store_with_its_replay_command(tmp_path, monkeypatch):
    file, _ = _recorded_search(tmp_path, monkeypatch)
    slots = Slots(mp.get_context("spawn"), 2, tmp_path)
    assert slots.search_file(0) == file
    slots.held[0] = 4  # slot 0 died making model 4, its search recorded
    rec = death_record(slots, 0, -11, lambda i: 100 + i)
    assert rec["seeds"] == [104] and not file.exists()  # (so a restarted producer cannot overwrite it)
    store = tmp_path / "bugs"
    store.mkdir()
    kept = search_record.keep(search_record.Path(rec["search"]), store)
    dest = store / "producer_deaths" / f"death-model4-slot0{search_record.SUFFIX}"
    assert kept == {"search": str(dest), "replay": f"python -m nnfuzz.materialize.search_replay {dest}"}
    assert dest.exists()
    slots.held[1] = 5  # slot 1 died with no search recorded for its model: nothing to keep
    assert "search" not in death_record(slots, 1, -11, lambda i: 100 + i)
