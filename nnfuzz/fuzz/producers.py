"""Producer processes: models made in parallel with the tests (``fuzz.producers``).

One process is spawned first thing in a campaign, before the sandbox and the probe, so that its
imports (torch, z3, onnx, every op's lowerings) and one-off warm-up (a first graph, value search and
ONNX build, whose model is thrown away) overlap the campaign's own start instead of delaying its first
test by seconds. Once ``go`` tells it what the campaign settled on (its plan, fuzz/plan.py: the ops,
the supported op x dtype rows, the probed opsets, the oracles), it forks the other n - 1 producers: they start warm, and the
imports and warm-up are paid once, not n times (and their memory pages are shared until written).
Producer k makes the campaign's models k, k + n, k + 2n, ... (their seeds: fuzz/resume.py seed_at, which
skips the seeds the store already tested), so no seed is made twice.

Once a producer has grown by more than ``fuzz.producer_growth`` over its size after its first models
(fuzz/producer_memory.py), or every ``fuzz.producer_models`` models a producer makes, the campaign
replaces the producers with fresh ones: a planned restart, not a death, which bounds their memory. The
models in flight are made again by the new producers, from the coverage guide's state as of then.
"""
from __future__ import annotations

import multiprocessing as mp
import queue as queue_mod
import time
from typing import TYPE_CHECKING, Optional

from nnfuzz.errors import NNFuzzError
from nnfuzz.fuzz.handoff import clear, take
from nnfuzz.fuzz.produce import Produced
from nnfuzz.fuzz.producer_proc import producer_main

if TYPE_CHECKING:
    from nnfuzz.fuzz.campaign import CampaignConfig
    from nnfuzz.fuzz.plan import CampaignPlan

WORTH_REPLACING_S = 30.0   # producers are not replaced with less time left than this: the warm-up would not pay


class Producers:
    """``n`` producers: the first is started at once and warms up; ``go`` sets them all to work. One
    that dies is restarted (fuzz/producer_watch.py): ``on_death`` (set by the campaign) gets its record."""

    def __init__(self, cc: "CampaignConfig", n: int):
        import tempfile
        import threading
        from pathlib import Path

        from nnfuzz.fuzz.producer_watch import Slots

        self.ctx = ctx = mp.get_context("spawn")
        self.n, self.cc = n, cc
        self.done = ctx.Event()
        self.folder = Path(tempfile.mkdtemp(prefix="nnfuzz-producers-"))  # fault files, models handed over
        self.slots = Slots(ctx, n, self.folder)
        self.got = list(range(-n, 0))   # per slot, the last model number received (k - n: none yet)
        self.skip = set()               # model numbers a producer died making: never made again
        self.on_death = None            # (record) -> None, the campaign's: logs and counts a death
        self.restarts, self._quiet_deaths, self._go = 0, 0, None
        self.made, self.recycles = 0, 0     # models received from this generation; generations replaced
        self.on_recycle = None              # (record) -> None, the campaign's: logs and counts a recycle
        self.state_now = None               # () -> the coverage guide's state now (GuideState.to_json), or None
        self._restart_lock = threading.Lock()
        self._spawn()

    def _spawn(self) -> None:
        ctx = self.ctx
        self.queue = ctx.Queue(maxsize=2 * self.n)
        self.updates = [ctx.Queue() for _ in range(self.n)]  # coverage guidance's news, one per producer (put never blocks)
        reader, self._plan = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=producer_main, daemon=True, name="nnfuzz-producer",
                                args=(self.cc, self.n, reader, self.queue, self.done, self.updates, self.slots))
        try:
            self.proc.start()
        except BaseException:
            self.close()
            raise
        finally:
            reader.close()  # the child holds its end

    def go(self, cc: "CampaignConfig", plan: "CampaignPlan", time_left: float, guide_state=None) -> None:
        """Start making models: the campaign's config and plan, and the coverage guide's state
        (GuideState.to_json) they start from."""
        shipped, op_names = plan.shipped()
        self._go = (cc, shipped, op_names, time.monotonic() + time_left, guide_state)
        self._send()

    def _send(self) -> None:
        starts = [self.got[k] + self.n for k in range(self.n)]
        try:
            self._plan.send((*self._go, starts, frozenset(self.skip)))
        except OSError:
            pass  # the producer died: get() says so

    def tell(self, updates) -> None:
        """Pass the campaign's new coverage keys and bug triggers (CampaignGuide.updates) to every producer:
        rare after the first minutes, and small (only what is new), so sent as it comes."""
        if updates is not None and not self.done.is_set():
            for q in self.updates:
                q.put(updates)

    def get(self, timeout: float) -> Optional[Produced]:
        """The next model, or None after ``timeout`` s (a producer found dead meanwhile is restarted);
        NNFuzzError once they die again and again without making a model."""
        q = self.queue
        try:
            p = take(self.folder, q.get(timeout=timeout))
        except queue_mod.Empty:
            p = None
        except (OSError, ValueError):  # closed (or its model file cleared) by a restart in another lane's thread meanwhile
            if q is self.queue:
                raise
            return None
        if p is not None:
            with self._restart_lock:  # (counted before a restart decides where the producers start again)
                if p.index is not None:
                    k = p.index % self.n
                    self.got[k] = max(self.got[k], p.index)
                self._quiet_deaths = 0
                self.made += 1
        self._watch(q)  # on every call: while one producer fills the queue, another may have died
        if p is not None:
            why = self._worn_out()
            if why is not None:
                self._recycle(q, why)
        return p

    def _worn_out(self) -> Optional[dict]:
        """Why fresh producers should replace these ones now (None: they should not)."""
        from nnfuzz.fuzz.producer_memory import grown

        every, slots = self.cc.producer_models, self.slots
        if self._go is None or self._go[3] - time.monotonic() < WORTH_REPLACING_S:
            return None
        if every and self.made >= self.n * every:
            return {"why": "models", "models": self.made}
        if grown(slots, self.cc.producer_growth):
            return {"why": "memory", "models": self.made, "rss_mb": list(slots.rss), "base_mb": list(slots.base)}
        return None

    def _recycle(self, q, record: dict) -> None:
        """Replace the producers with fresh ones (once, whichever lane thread gets there first)."""
        state = self.state_now() if self.state_now is not None else None  # (before the lock: it takes the campaign's)
        with self._restart_lock:
            if q is not self.queue or self.done.is_set() or self._go is None:
                return
            record = {"generation": self.recycles + 1, **record}
            if state is not None:
                self._go = (*self._go[:4], state)
            self.recycles += 1
            self._new_generation()
        if self.on_recycle is not None:
            self.on_recycle(record)

    def _watch(self, q) -> None:
        """Restart the producers if one died (once, whichever lane thread finds it)."""
        from nnfuzz.fuzz import producer_watch as watch
        from nnfuzz.fuzz.resume import seed_at

        if not watch.dead(self.slots, self.proc.exitcode):
            return  # (all alive, or ended on their own past the deadline)
        with self._restart_lock:
            if q is not self.queue or self.done.is_set():
                return  # restarted by another lane meanwhile, or closed
            deaths = watch.dead(self.slots, self.proc.exitcode)
            if not deaths:
                return
            cc = self._go[0] if self._go else self.cc
            records = [watch.death_record(self.slots, k, code, lambda i: seed_at(cc.policy.seed, cc.tested_seeds or (), i))
                       for k, code in deaths]
            self._quiet_deaths += 1
            if self._quiet_deaths > watch.MAX_QUIET_DEATHS:
                raise NNFuzzError(f"the producer processes exited (exit code {deaths[0][1]}) "
                                  f"{self._quiet_deaths} time(s) with no model made in between; the seeds they "
                                  f"held: {[s for r in records for s in r['seeds']]}; see the messages above")
            self.skip.update(r["index"] for r in records if r["index"] is not None)
            self.restarts += 1
            self._new_generation()
        for r in records:
            if self.on_death is not None:
                self.on_death(r)

    def _new_generation(self) -> None:
        """(Under the restart lock.) End these producers and start fresh ones, sent the plan if ``go`` was
        (else ``go`` sends it), from the coverage state in it."""
        self._stop_group()
        self.slots.reset()
        self.made = 0
        self._spawn()
        if self._go is not None:
            self._send()

    def _stop_group(self) -> None:
        """End this generation of producers (the forked ones die with the first), drop its queues and
        the model files it handed over that were not taken."""
        if self.proc.pid is not None:
            self.proc.kill()
            self.proc.join(5.0)
        self._plan.close()
        for q in [self.queue, *self.updates]:
            q.close()
            q.cancel_join_thread()
        clear(self.folder)

    def close(self) -> None:
        """Stop them at once: they hold nothing worth waiting for (no one reads the queue now, and a
        model half made is thrown away); the forked ones die with the first. Closing again does nothing."""
        import shutil

        if self.done.is_set():
            return
        self.done.set()
        self._stop_group()
        shutil.rmtree(self.folder, ignore_errors=True)
