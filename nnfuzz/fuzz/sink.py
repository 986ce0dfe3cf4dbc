"""Where a campaign's bugs go (the bug sink): the dedup index, the bug store, the counters of saved bugs,
bug-aware guidance and the background reducer, one lane at a time under the campaign's lock. The
campaign process is the store's only writer; saving (fuzz/saving.py) hands each confirmed bug here."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Tuple

from nnfuzz.triage.bugstore import BugStore
from nnfuzz.triage.dedup import Deduper

if TYPE_CHECKING:
    from nnfuzz.fuzz.campaign import CampaignConfig
    from nnfuzz.fuzz.context import Clock


class BugSink:
    def __init__(self, cfg: "CampaignConfig", lock, counters, guide, clock: "Clock", stop,
                 note: Callable[[str], None], add_seconds: Callable[[str, float], None], tolerances: dict):
        self.cfg, self.lock, self.counters, self.guide, self.clock, self.stop = cfg, lock, counters, guide, clock, stop
        self.note, self.add_seconds, self.tolerances = note, add_seconds, tolerances
        self.store = BugStore(cfg.out)
        self.dedup = Deduper(cfg.out)
        self.reducer = None              # the background reducer (fuzz.reduce), started with the first bug
        counters.unique_bugs = self.dedup.unique

    def save(self, meta, err_log: str, verdict, flaky: bool, reducible: bool, **files) -> Tuple[object, object]:
        """Sign ``meta`` (dedup), save the bug folder (``files``: BugStore.save's), count it, tell the
        guide and hand a new unique bug to the reducer; (its path, the signed meta)."""
        with self.lock:  # one lane at a time checks the dedup index and takes a folder (fuzz/pool.py)
            sig, dup = self.dedup.check(meta, err_log)
            meta = meta.replace(signature=sig, duplicate_of=dup)
            path = self.store.save(meta=meta, err_log=err_log, **files)
            self._count(meta, path, flaky, verdict)
            if dup is None:
                self.guide.bug_saved(path, sig)  # bug-aware guidance: its localized op is down-weighted from now on
            if self.cfg.reduce and dup is None and self.clock.left() > 0 and reducible:
                self._reduce_later(path)
        return path, meta

    def _count(self, meta, path, flaky: bool, v) -> None:
        n = self.counters
        self.dedup.saved(meta.signature, path.name)
        n.bugs_saved += 1
        n.new_unique += meta.duplicate_of is None
        n.unique_bugs = self.dedup.unique
        n.flaky += flaky
        n.last_bug = f"{path.name}: {v.label} at {v.stage.value}: {v.summary[:100]}"

    def _reduce_later(self, path) -> None:
        """Hand a just-saved bug to the background reducer (fuzz/reducer.py), started on first use."""
        if self.reducer is None:
            from nnfuzz.fuzz.reducer import BackgroundReducer
            from nnfuzz.fuzz.sandbox import Sandbox

            cc = self.cfg

            def make_sandbox(system, options):
                return Sandbox(system, options, test_timeout=cc.test_timeout, memory_limit_mb=cc.memory_limit_mb,
                               backend_path=cc.backend_path if system == cc.backend else None, stop=self.stop)

            def add_seconds(s):
                self.add_seconds("triage", s)

            self.reducer = BackgroundReducer(make_sandbox, self.tolerances, cc.reduce_s, self.clock.deadline,
                                             self.store.lock, self.note, add_seconds)
        self.reducer.submit(path)

    def poll(self) -> None:
        """(Under the lock.) The guide takes the triggers of the reductions finished since."""
        self.guide.poll_reducer(self.reducer)

    def close(self) -> None:
        """Let the reducer finish (within the time bound); count the bugs it reduced."""
        if self.reducer is None:
            return
        self.reducer.close()
        self.guide.poll_reducer(self.reducer)  # triggers of the last reductions, kept for the next run
        self.counters.reduced = sum(r.get("status") == "reduced" for r in self.reducer.results)

