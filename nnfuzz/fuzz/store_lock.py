"""One writer at a time per store (``fuzz.out``): an inter-process lock.

Two campaigns writing the same store would share its folder numbers, its dedup index and its
campaign_state.json. A campaign holds ``fcntl.flock`` on ``<fuzz.out>/.campaign.lock`` from start to
end, and writes its pid, host and start time there; a second campaign is refused with a message naming
the first one. The kernel drops the lock when its holder dies however it dies (SIGKILL included), so a
lock file left by a dead campaign is taken over, with a warning (that campaign's last seconds of seeds
may be tested again: fuzz/resume.py). A lock file naming another host is refused while it is there:
flock on a network file system may not reach that host, so whether its campaign still runs is the
user's to say (delete the file if it does not).

The commands that rewrite a store take the same lock, naming themselves in the record: ``nnfuzz dedup``
(its index, README and, with --recheck, every meta.json), ``nnfuzz merge`` (its output store) and
``nnfuzz reduce`` (a folder of a campaign's store, which that campaign's reducer may be rewriting). Each
is refused while a campaign holds the store, and a campaign is refused while one of them does.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path

from nnfuzz.errors import ConfigError

LOCK_FILE = ".campaign.lock"


class StoreLocked(ConfigError):
    """Another campaign (or a command that rewrites the store) holds the store."""


def _holder(fd: int) -> dict:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 4096).decode(errors="replace").strip()
    if not text:
        return {}
    try:
        got = json.loads(text)
        return got if isinstance(got, dict) else {"text": text}
    except ValueError:
        return {"text": text}


def _describe(h: dict) -> str:
    if "pid" not in h:
        return f"an unreadable holder record {h.get('text', '')[:80]!r}"
    return f"pid {h['pid']} on host {h.get('host')}, started {h.get('started')}"


def _holder_name(h: dict) -> str:
    return "another campaign" if h.get("command", "fuzz") == "fuzz" else f"nnfuzz {h['command']}"


def _open_locked(out: Path, path: Path, command: str) -> int:
    """An open descriptor of ``path`` holding its flock; StoreLocked when another campaign holds it.
    (A lock file removed by its closing holder meanwhile is opened again: the lock is the file's.)"""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            h = _holder(fd)
            os.close(fd)
            fix = ("wait for it to end, stop it, or give this one another fuzz.out" if command == "fuzz" else
                   "run this when it has ended, or on a copy of the store")
            raise StoreLocked(f"{out} is in use by {_holder_name(h)} ({_describe(h)}); two writers must not rewrite "
                              f"one store: {fix}") from None
        try:
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


@contextlib.contextmanager
def store_lock(out, command: str = "fuzz"):
    """Hold ``out``'s lock for the block as ``nnfuzz command``; StoreLocked when another holds it."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK_FILE
    fd = _open_locked(out, path, command)
    try:
        here = socket.gethostname()
        before = _holder(fd)
        who = _holder_name(before)
        if before.get("pid") is not None and before.get("host") != here:
            raise StoreLocked(f"{path} says {who} on another host holds {out} ({_describe(before)}); if it no longer "
                              f"runs, delete {path} and run again")
        if before:  # a holder that closes the store removes this file
            seeds = ". Its last few seconds of seeds may be tested again" if who == "another campaign" else ""
            print(f"warning: {out} was left locked by {who.replace('another ', 'a ')} that ended without closing it "
                  f"({_describe(before)}: killed?); taking it over{seeds}", file=sys.stderr, flush=True)
        record = {"pid": os.getpid(), "host": here, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  **({"command": command} if command != "fuzz" else {})}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
        try:
            yield record
        finally:
            path.unlink(missing_ok=True)  # (holding the lock: a campaign that opened this file opens it again)
    finally:
        os.close(fd)  # releases the flock
