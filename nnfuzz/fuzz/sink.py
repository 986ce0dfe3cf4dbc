"""Where a campaign's bugs go (the bug sink): the dedup index with the known bugs (triage/deduper.py,
triage/known.py), the bug store, the counters of saved and counted bugs, bug-aware guidance and the
background reducer, one lane at a time under the campaign's lock. The campaign process is the store's
only writer; saving (fuzz/saving.py) hands each confirmed bug here.

A bug is saved as a new folder, replaces a larger example of its signature, or is only counted
(``fuzz.keep_per_signature``); only a new root cause (a signature neither known nor in the store) is
reduced and tells the guide its trigger."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Tuple

from nnfuzz.triage.brief import brief, describe
from nnfuzz.triage.bugstore import BugStore
from nnfuzz.triage.deduper import Decision, Deduper, replace_folder
from nnfuzz.triage.known import known_bugs_of

if TYPE_CHECKING:
    from nnfuzz.fuzz.campaign import CampaignConfig
    from nnfuzz.fuzz.context import Clock


class BugSink:
    def __init__(self, cfg: "CampaignConfig", lock, counters, guide, clock: "Clock", stop,
                 note: Callable[[str], None], add_seconds: Callable[[str, float], None], tolerances: dict):
        self.cfg, self.lock, self.counters, self.guide, self.clock, self.stop = cfg, lock, counters, guide, clock, stop
        self.note, self.add_seconds, self.tolerances = note, add_seconds, tolerances
        self.store = BugStore(cfg.out)
        self.dedup = Deduper(cfg.out, cfg.keep_per_signature, known_bugs_of(cfg))
        self.reducer = None              # the background reducer (fuzz.reduce), started with the first bug
        self.hit = {"new": set(), "known": set()}   # signatures this campaign met, by whether they are known
        counters.unique_bugs = self.dedup.unique

    def decide(self, meta, err_log: str) -> Decision:
        """What ``save`` would do with ``meta`` now (a bug only counted need not be re-run)."""
        with self.lock:
            return self.dedup.decide(meta, err_log)

    def save(self, meta, err_log: str, flaky: bool, reducible: bool,
             **files) -> Tuple[Optional[object], object, Decision]:
        """Sign ``meta`` (dedup, known bugs), save the bug folder (``files``: BugStore.save's) as a new
        folder or over a larger example of its signature, or only count it; tell the guide and hand a new
        root cause to the reducer. (The folder's path or None when only counted, the signed meta, the
        decision.)"""
        with self.lock:  # one lane at a time checks the dedup index and takes a folder (fuzz/pool.py)
            d = self.dedup.decide(meta, err_log)
            meta = meta.replace(signature=d.signature, duplicate_of=d.duplicate_of)
            path = None
            if d.action == "save":
                path = self.store.save(meta=meta, err_log=err_log, **files)
                self.dedup.saved(d.signature, path.name, meta.nodes)
            elif d.action == "replace":
                path = replace_folder(self.store, d.replace, meta=meta, err_log=err_log, **files)
                self.dedup.replaced(d.signature, d.replace, meta.nodes)
            self._count(d, meta, path, flaky, err_log)
            if d.status == "new":
                self.guide.bug_saved(path, d.signature)  # bug-aware guidance: its localized op is down-weighted from now on
            if self.cfg.reduce and d.status == "new" and self.clock.left() > 0 and reducible:
                self.dedup.pinned.add(path.name)  # never replaced while (or after) the reducer has it
                self._reduce_later(path)
        return path, meta, d

    def _count(self, d: Decision, meta, path, flaky: bool, err_log: str) -> None:
        n = self.counters
        group = "known" if d.status == "known" else "new"
        if d.signature not in self.hit[group] and d.status == "known":
            self.note(f"known bug hit: {d.known} ({d.signature}); {_examples(self.cfg.keep_per_signature)} "
                      "of it are kept in this store, the rest counted")
        self.hit[group].add(d.signature)
        n.new_root_causes, n.known_root_causes = len(self.hit["new"]), len(self.hit["known"])
        setattr(n, f"{group}_hits", getattr(n, f"{group}_hits") + 1)
        n.counted += d.action == "count"
        n.replaced += d.action == "replace"
        n.unique_bugs = self.dedup.unique
        if path is None:
            return
        n.bugs_saved += d.action == "save"
        setattr(n, f"{group}_folders", getattr(n, f"{group}_folders") + (d.action == "save"))
        n.new_unique += d.status == "new"
        n.flaky += flaky
        b = brief(meta, err_log)
        n.last_bug = _cut(f"{path.name}: {describe(b)}", 200)
        if d.status == "new" and d.action == "save":
            n.new_bugs.append({"folder": str(path), **b})

    def _reduce_later(self, path) -> None:
        """Hand a just-saved bug to the background reducer (fuzz/reducer.py), started on first use."""
        if self.reducer is None:
            from nnfuzz.fuzz.reducer import BackgroundReducer
            from nnfuzz.fuzz.sandbox import Sandbox

            cc = self.cfg

            def make_sandbox(system, options):
                # the campaign's scaled timeout (Clock: oracle=grad compiles a forward and a backward graph)
                return Sandbox(system, options, test_timeout=self.clock.test_timeout, memory_limit_mb=cc.memory_limit_mb,
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


def _examples(keep: int) -> str:
    return "every example" if not keep else f"{keep} example" + ("" if keep == 1 else "s")


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
