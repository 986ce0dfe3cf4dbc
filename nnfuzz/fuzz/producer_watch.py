"""Watching the producer processes (fuzz/producers.py): a producer that dies (a native crash in
generation, the value search or the ONNX checker: SIGSEGV, exit code -11) is restarted, not the end of
the campaign.

Each producer slot ``k`` (the campaign's models k, k + n, ...) records in shared memory the model number
it is making (``held``); the first producer reaps the ones it forked and records how each ended
(``exits``). Every producer has faulthandler on, writing to a file of its own, so a native crash leaves
the Python stack it died in. When the campaign finds a producer dead, it reads these, logs
``{"producer_died": {"slot", "exit_code", "seeds", "stack", "search", "replay"}}`` (the seeds it held:
``mgen.seed=S`` replays one where the coverage guide's state does not shape the graph; ``search``: the
value search it died in, if any, kept in the store; ``replay``: the command that runs it again),
counts it (``producer_restarts``) and starts the producers again, the model that was being made when it
died skipped.

``NNFUZZ_TEST_PRODUCER_SEGV=I`` (tests only) makes the producer that is to make the campaign's model
number ``I`` kill itself with SIGSEGV first.
"""
from __future__ import annotations

import faulthandler
import os
import signal
import threading
from pathlib import Path
from typing import Dict, List, Optional

DIE_AT_ENV = "NNFUZZ_TEST_PRODUCER_SEGV"
ALIVE = 1 << 30            # ``exits``: the slot's process has not ended
MAX_QUIET_DEATHS = 3       # deaths in a row with no model made in between: the producers cannot work
STACK_CHARS = 4000         # the tail of a dead producer's faulthandler output kept in the log

_fault_file = None         # this process's faulthandler file (kept open while the process lives)


class Slots:
    """What the producer processes share with the campaign: per slot, the model number being made (-1:
    none) and how the slot's process ended (ALIVE: it has not), and the producers' folder (their fault
    files, and the models they hand over: fuzz/handoff.py)."""

    def __init__(self, ctx, n: int, folder: Path):
        self.held = ctx.RawArray("q", [-1] * n)
        self.exits = ctx.RawArray("i", [ALIVE] * n)
        self.rss = ctx.RawArray("i", [0] * n)   # MiB after the slot's last model (fuzz/producer_memory.py)
        self.base = ctx.RawArray("i", [0] * n)  # MiB after its first BASE_MODELS models (0: not yet)
        self.folder = str(folder)

    def reset(self) -> None:
        for k in range(len(self.held)):
            self.held[k], self.exits[k], self.rss[k], self.base[k] = -1, ALIVE, 0, 0

    def fault_file(self, k: int) -> Path:
        return Path(self.folder) / f"producer-{k}.txt"

    def search_file(self, k: int) -> Path:
        from nnfuzz.materialize.search_record import SUFFIX

        return Path(self.folder) / f"producer-{k}{SUFFIX}"


def enable_faults(slots: Slots, k: int) -> None:
    """faulthandler on in producer ``k``, into its own file (a forked producer replaces its parent's),
    and its value searches recorded in another (materialize/search_record.py)."""
    from nnfuzz.materialize import search_record

    global _fault_file
    search_record.path = slots.search_file(k)
    f = open(slots.fault_file(k), "w")
    faulthandler.enable(file=f, all_threads=True)
    if _fault_file is not None:
        _fault_file.close()
    _fault_file = f


def reap(children: Dict[int, int], slots: Slots) -> None:
    """(The first producer.) Record how each forked producer (pid -> slot) ends, in a daemon thread."""

    def wait():
        left = dict(children)
        while left:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                return
            k = left.pop(pid, None)
            if k is not None:
                slots.exits[k] = os.waitstatus_to_exitcode(status)

    threading.Thread(target=wait, name="nnfuzz-producer-reaper", daemon=True).start()


def maybe_die(i: int) -> None:
    """The test hook: SIGSEGV before making model number ``i`` if NNFUZZ_TEST_PRODUCER_SEGV says so ("2":
    model 2; "2+": every model from 2 on, so the restarted producers die too)."""
    at = os.environ.get(DIE_AT_ENV)
    if at is not None and (i >= int(at[:-1]) if at.endswith("+") else i == int(at)):
        os.kill(os.getpid(), signal.SIGSEGV)


def dead(slots: Slots, first_exitcode: Optional[int]) -> List[tuple]:
    """(slot, exit code) of the producers that died: a non-zero end (the first producer's ``exitcode``
    is read by the campaign, the others' by the first producer). Slots killed by the first producer's
    death (their parent) are not deaths of their own."""
    if first_exitcode not in (None, 0):
        return [(0, first_exitcode)]
    return [(k, c) for k, c in enumerate(slots.exits) if c not in (ALIVE, 0)]


def death_record(slots: Slots, k: int, code: int, seed_of) -> dict:
    """The campaign.jsonl record of slot ``k``'s death: its exit code, the seeds it held, its stack."""
    held = slots.held[k]
    try:
        stack = slots.fault_file(k).read_text(errors="replace")[-STACK_CHARS:]
    except OSError as e:
        stack = f"(no faulthandler output: {e})"
    rec = {"slot": k, "exit_code": code, "index": held if held >= 0 else None,
           "seeds": [seed_of(held)] if held >= 0 else [], "stack": stack}
    from nnfuzz.materialize.search_record import SUFFIX

    search = slots.search_file(k)
    if held >= 0 and search.exists():  # it died in (or after) a value search of the model it held
        kept = search.with_name(f"death-model{held}-slot{k}{SUFFIX}")
        os.replace(search, kept)  # (before a restarted producer of this slot writes its own)
        rec["search"] = str(kept)
    return rec
