"""A producer killed at any instant never leaves the campaign waiting (fuzz/handoff.py): only a model
file's name crosses the queue, in one atomic pipe write, and a model file is complete before it is named."""
import multiprocessing as mp
import os
import pickle
import queue
import select
import signal
import threading
import time
from types import SimpleNamespace

import pytest

from nnfuzz.fuzz.handoff import clear, hand_over, take

BIG = 4 << 20   # bytes: far over a pipe's buffer, so a model carried by the queue itself is written in pieces


def _make_forever(q, folder):
    i = 0
    while True:
        q.put(hand_over(SimpleNamespace(index=i, blob=os.urandom(BIG)), folder))
        i += 1


def test_a_handed_over_model_comes_back_whole_and_its_file_is_removed(tmp_path):
    name = hand_over(SimpleNamespace(index=3, blob=b"\x01" * BIG), tmp_path)
    assert len(pickle.dumps(name)) < select.PIPE_BUF, "the queue message must fit one atomic pipe write"
    got = take(tmp_path, name)
    assert got.index == 3 and got.blob == b"\x01" * BIG
    assert list(tmp_path.iterdir()) == []


def test_clear_removes_unsent_and_half_written_models_only(tmp_path):
    hand_over(SimpleNamespace(index=1), tmp_path)
    (tmp_path / "2-99.model.part").write_bytes(b"half")
    (tmp_path / "producer-0.txt").write_text("fault file")
    clear(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["producer-0.txt"]


@pytest.mark.slow
def test_a_producer_killed_mid_hand_over_never_blocks_the_reader(tmp_path):
    """The hang this replaces: a producer killed while its queue's feeder wrote a multi-MB model left half a
    message in the pipe, and the campaign's get() blocked forever. Kill a producer of 4 MB models at
    several instants: every get() afterwards returns within its timeout, with a whole model or nothing."""
    ctx = mp.get_context("fork")
    for delay in (0.05, 0.13, 0.31, 0.5, 0.77):
        q = ctx.Queue(maxsize=2)
        child = ctx.Process(target=_make_forever, args=(q, tmp_path), daemon=True)
        child.start()
        time.sleep(delay)
        os.kill(child.pid, signal.SIGKILL)
        child.join(5)
        got, ended = [], threading.Event()

        def drain():
            while True:
                try:
                    got.append(take(tmp_path, q.get(timeout=0.5)))
                except queue.Empty:
                    break
            ended.set()

        threading.Thread(target=drain, daemon=True).start()
        assert ended.wait(20), f"get() blocked after a kill at {delay} s"
        assert all(len(p.blob) == BIG for p in got)
        q.close()
        q.cancel_join_thread()
        clear(tmp_path)
