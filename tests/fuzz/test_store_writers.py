"""The commands that rewrite a store (dedup, merge's output, reduce of a campaign's folder) take the
store's lock (fuzz/store_lock.py): each is refused while a campaign holds the store, naming it, and
leaves the store as it was; a campaign is refused while one of them holds it."""
import os
import shutil
from pathlib import Path

import pytest

from nnfuzz.cli import main
from nnfuzz.fuzz.store_lock import LOCK_FILE, StoreLocked, store_lock

KEPT = Path(__file__).parents[2] / "bugs" / "kept" / "0000"


def _store(tmp_path: Path) -> Path:
    out = tmp_path / "bugs"
    out.mkdir(parents=True)
    shutil.copytree(KEPT, out / "0000", ignore=shutil.ignore_patterns("original"))  # not reduced yet
    (out / "campaign.jsonl").write_text("")
    return out


@pytest.mark.parametrize("argv", [["dedup", "{out}"], ["dedup", "{out}", "--recheck"], ["merge", "{src}", "-o", "{out}"],
                                  ["reduce", "{out}/0000"]])
def test_a_store_rewriter_is_refused_while_a_campaign_holds_the_store(argv, tmp_path, capsys):
    out, src = _store(tmp_path), _store(tmp_path / "src")
    before = sorted(p.name for p in out.iterdir())
    with store_lock(out):  # as a running campaign holds it
        assert main([a.format(out=out, src=src) for a in argv]) == 2
    err = capsys.readouterr().err
    assert f"{out} is in use by another campaign (pid {os.getpid()} on host" in err, err
    assert "run this when it has ended, or on a copy of the store" in err
    assert sorted(p.name for p in out.iterdir()) == [n for n in before if n != LOCK_FILE]  # no index, no folder
    assert not (out / "0000" / "original").exists()


def test_a_campaign_is_refused_while_dedup_holds_the_store(tmp_path):
    out = _store(tmp_path)
    with store_lock(out, "dedup"):
        with pytest.raises(StoreLocked, match=r"in use by nnfuzz dedup \(pid \d+ on host .*give this one another fuzz.out"):
            with store_lock(out):
                pass
    assert not (out / LOCK_FILE).exists()


def test_dedup_of_a_store_no_one_holds_writes_its_index_and_frees_the_lock(tmp_path, capsys):
    out = _store(tmp_path)
    assert main(["dedup", str(out)]) == 0
    assert (out / "index.json").exists() and not (out / LOCK_FILE).exists()
