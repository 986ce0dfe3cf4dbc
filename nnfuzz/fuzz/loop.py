"""A running campaign: its state (counters, log, the seeds done, the coverage guide, the bug sink,
fuzz/sink.py) and its test loop, a list of phases per test (produce: fuzz/produce.py; test and judge:
the model's oracle, nnfuzz/oracles/; re-run and save: fuzz/saving.py), each with its own counters,
under one hard time bound. The lanes of fuzz/pool.py hand it their models (``consume``). Start-up
(fuzz/campaign.py) gives it the plan of what the systems decided (fuzz/plan.py)."""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import nnfuzz
from nnfuzz.errors import InternalError, ModelBuildError
from nnfuzz.fuzz.diskfull import disk_full, store_full, write_unless_full
from nnfuzz.fuzz.context import SLOW_PATIENCE, Clock, RunContext, tolerances_of
from nnfuzz.fuzz.plan import CampaignPlan
from nnfuzz.fuzz.produce import Produced, produce
from nnfuzz.fuzz.saving import confirm_and_save
from nnfuzz.fuzz.sink import BugSink
from nnfuzz.fuzz.runlog import RunLog
from nnfuzz.fuzz.status import Counters, Status
from nnfuzz.fuzz.stopping import Stopped, StopRequest
from nnfuzz.native_memory import TRIM_EVERY_S, trim_heap
from nnfuzz.output import say

if TYPE_CHECKING:
    from nnfuzz.fuzz.campaign import CampaignConfig

STATE_EVERY_S = 5.0   # how often the main thread records the seeds tested (fuzz/resume.py)
WHY_CHARS = 300       # the part of an unsupported verdict's summary its log record keeps ("why")


class Campaign:
    """A campaign's state while it runs (counters, log, seeds done, the guide and the bug sink) and its
    test loop: the pool's lanes hand it their models (``consume``)."""

    def __init__(self, cfg: "CampaignConfig", plan: Optional[CampaignPlan] = None, clock: Optional[Clock] = None,
                 stop: Optional[StopRequest] = None):
        if cfg.policy.seed is None:
            raise InternalError("a campaign needs a concrete seed: run_campaign draws one for mgen.seed=null")
        self.cfg, self.plan = cfg, plan   # (``plan``: given here or to ``run``)
        self.stop = stop or StopRequest()  # set by SIGINT/SIGTERM/SIGHUP (fuzz/stopping.py)
        self.clock = clock or Clock(cfg.time_s, cfg.test_timeout)
        self.lock = threading.RLock()    # counters, log, dedup index and bug store: lanes are threads (fuzz/pool.py)
        self.ended = False               # campaign_end written: the log is closed
        self.seeds_done = []             # seeds this campaign consumed since the state was last written
        self.done_ranges = ()            # ... and before, as merged ranges (fuzz/resume.py)
        self.claimed = 0                 # tests lanes have taken on and not finished (see ``claim``)
        self._state_at = time.monotonic()
        self.counters = Counters()
        self.tolerances = tolerances_of(cfg)
        self.status = None
        from nnfuzz.fuzz.guidestate import CampaignGuide  # first: a corrupt guide_state.json stops us before any write

        self.guide = CampaignGuide(cfg.out, None, cfg.policy.guide == "coverage" and cfg.source is None,
                                   cfg.policy.guide_bugs)
        self.sink = BugSink(cfg, self.lock, self.counters, self.guide, self.clock, self.stop, self.note,
                            self.add_seconds, self.tolerances)
        self.log = self.guide.log = RunLog(cfg.out / cfg.log if cfg.log else None, self.counters.started)
        self.ctx: Optional[RunContext] = None  # made by ``run`` from lane 0's systems
        self.producers = None            # fuzz.producers.Producers started by run_campaign (else by run)

    def left(self) -> float:
        return self.clock.left()

    def note(self, msg: str) -> None:
        if self.status is not None:
            self.status.note(msg)
        else:
            say(msg)

    def context(self, lane) -> RunContext:
        """The run context of a campaign whose lanes are like ``lane`` (its systems' BackendInfos)."""
        oracle, other = self.plan.oracle, lane.expected_sandbox
        return RunContext(self.cfg, self.clock, lane.sandbox.backend_info, self.tolerances, self.add_seconds,
                          self.note, oracle.expected_system if other is not None else None,
                          oracle.expected_options if other is not None else {},
                          other.backend_info if other is not None else None)

    def seed_at(self, i: int) -> int:
        """The seed of the campaign's ``i``-th model: seeds the store already tested are skipped."""
        from nnfuzz.fuzz.resume import seed_at

        return seed_at(self.cfg.policy.seed, self.cfg.tested_seeds or (), i)

    def run(self, lanes, plan: Optional[CampaignPlan] = None) -> Counters:
        """Run tests on ``lanes`` (fuzz/pool.py Lane: a sandbox and its expected side's, started by the
        caller) until the time bound (or max_tests)."""
        from nnfuzz.fuzz.pool import Pool

        self.plan = plan or self.plan
        pool = Pool(self, lanes)
        self.counters.workers = len(lanes)
        self.ctx = self.context(lanes[0])
        title = f"nnfuzz fuzz {self.cfg.backend} ({self.ctx.info.version})"
        try:
            with Status(self.counters, self.clock.deadline, self.cfg.ui, title, lanes,
                        producers=self.plan.producers) as status:
                self.status = status
                self._announce()
                try:
                    self._test_until_done(pool)
                except Stopped as e:
                    status.note(f"{e.name}: stopping the campaign (producers, workers and reducer end)")
                self.sink.close()
        except Stopped:
            pass  # a second signal while closing down: the counters so far are the campaign's result
        except Exception as e:
            full = disk_full(e)
            if full is None:
                raise
            raise store_full(self.cfg.out, full) from e  # (fuzz/diskfull.py: after the last records below)
        finally:
            self.counters.stopped = self.stop.name
            write_unless_full(lambda: self.guide.tick(self.counters.tests, self.counters.elapsed, force=True),
                              "the coverage guide's state", self.note)
            write_unless_full(self.record_seeds, "campaign_state.json (the next campaign may test again "
                              "the seeds of this one's last seconds)", self.note)
            with self.lock:  # a lane still finishing a test neither counts nor logs it after this line
                self.ended = True
                write_unless_full(lambda: self.log.write({"campaign_end": {
                    "stopped": self.stop.name, "tests": self.counters.tests, "lost": self.counters.lost}}),
                    "campaign_end to the log", self.note)
                write_unless_full(self.log.close, "the log's last lines", self.note)
        return self.counters

    def tick(self) -> None:
        """(The main thread, between tests.) Refresh the status display; record the seeds and give the
        heap's free pages back now and then."""
        self.status.refresh()
        self.record_seeds(every=STATE_EVERY_S)
        trim_heap(every=TRIM_EVERY_S)

    def record_seeds(self, every: float = 0.0) -> None:
        """Write the store's campaign_state.json (fuzz/resume.py), at most once per ``every`` seconds."""
        from nnfuzz.fuzz.resume import merge, ranges_of, write_state

        if self.cfg.source is not None or time.monotonic() - self._state_at < every:
            return
        self._state_at = time.monotonic()
        with self.lock:  # (merged as they come: re-sorting every seed of the campaign each time grew with its
            # length, 1.3 million seeds in 8 hours of ort-cpu)
            self.done_ranges = done = merge(self.done_ranges + ranges_of(self.seeds_done))
            self.seeds_done = []
        write_state(self.cfg.out, self.cfg.policy.seed, self.cfg.tested_seeds or (), done, self.campaigns)

    @property
    def campaigns(self) -> int:
        """How many campaigns tested into this store, this one included."""
        from nnfuzz.fuzz.resume import read_state

        if not hasattr(self, "_campaigns"):
            state = read_state(self.cfg.out) if self.cfg.tested_seeds else None
            self._campaigns = (state or {}).get("campaigns", 0) + 1
        return self._campaigns

    def _announce(self) -> None:
        """The campaign's seed, printed, and campaign.jsonl's first line for this campaign, with its plan."""
        seed = self.cfg.policy.seed
        resumed = self.cfg.tested_seeds
        self.status.note(f"seed {seed}: rerun with mgen.seed={seed}" + (
            f" (resuming: {sum(hi - lo for lo, hi in resumed)} seeds tested before into {self.cfg.out} are skipped)"
            if resumed else ""))
        self.log.write({"campaign": {"seed": seed, "backend": self.cfg.backend, "oracle": self.plan.oracle.name,
                                     "time_s": self.cfg.time_s, "nnfuzz": nnfuzz.__version__,
                                     "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                     "plan": self.plan.record()}})

    def _test_until_done(self, pool) -> None:
        """Test until the time bound or max_tests; a stop signal ends it with ``Stopped``. Models come
        from the migrated tests, from producers (started early by run_campaign, else here), or are made
        in the lanes' own threads."""
        from nnfuzz.fuzz import pool as pools

        if self.cfg.source is not None:
            from nnfuzz.migrate.loader import migrated_tests

            return pool.run(pools.iter_source(migrated_tests(self.cfg.source)))
        if self.plan.producers <= 0:
            return pool.run(pools.inline_source(self._make, self.stop))
        from nnfuzz.fuzz.executors import make_producers

        producers = self.producers = self.producers or make_producers(self.cfg)
        producers.on_death = self.producer_died
        try:
            if isinstance(producers, _local_producers()):  # (Ray's producer actors are not guided yet)
                producers.on_recycle, producers.state_now = self.producers_recycled, self._guide_state
                producers.go(self.cfg, self.plan, self.left(), self.guide.state.to_json())
            else:
                producers.go(self.cfg, self.plan, self.left())
            pool.run(pools.queue_source(producers, self.left))
        finally:
            producers.close()  # at once: models made from now on would never be tested

    def _make(self, i: int) -> Produced:
        """The campaign's ``i``-th model, made in this process."""
        if not self.guide.enabled:
            return produce(self.cfg, self.plan, self.seed_at(i), self.left())
        with self.lock:  # the coverage guide's state is shared with the lanes' accounting
            return produce(self.cfg, self.plan, self.seed_at(i), self.left(), self.guide.guide)

    def enough(self) -> bool:
        return bool(self.cfg.max_tests and self.counters.tests >= self.cfg.max_tests)

    def claim(self) -> bool:
        """A lane's right to take one more model: False while the tests done and under way already reach
        max_tests (so several lanes never run past it). Give it back with ``release``."""
        with self.lock:
            if self.cfg.max_tests and self.counters.tests + self.claimed >= self.cfg.max_tests:
                return False
            self.claimed += 1
            return True

    def release(self) -> None:
        with self.lock:
            self.claimed -= 1

    # ---- one test -----------------------------------------------------------------------------
    def consume(self, lane, p: Produced, worker: Optional[str] = None) -> None:
        """Test a produced model on ``lane`` (fuzz/pool.py Lane), or account for why there is none.
        Lanes call it from their threads (``worker``: the lane's name, logged with the test's start and
        end): the accounting holds the campaign's lock, the test itself does not."""
        c, rec = self.counters, dict(p.rec)
        if worker is not None:
            rec.update(worker=worker, began=round(c.elapsed, 3))
        search_s = p.timings.get("search_s", 0.0)
        oracle = self.plan.oracle_of(p)
        with self.lock:
            self._guide_news(p)
            if self.cfg.source is None:
                self.seeds_done.append(p.seed)
            c.seconds["generate"] += p.gen_s
            c.seconds["search"] += search_s
            c.seconds["export"] += p.build_s - search_s
            if p.error is not None:
                kind, msg = p.error
                if kind == "no-graph":
                    c.gen_failed += 1
                    self.log.write({**rec, "verdict": "no-graph", "error": msg})
                else:
                    self._nnfuzz_error(rec, p.seed, msg)
                return
            skip = oracle.skip(p)
            if skip is not None:  # not testable by its oracle (e.g. undefined values: whatever the system does is right)
                setattr(c, skip.counter, getattr(c, skip.counter) + 1)
                self.log.write({**rec, **skip.log})
                return
        if self.left() <= 0:
            return
        ctx = self.ctx or self.context(lane)
        try:
            t = oracle.test(ctx, lane, p)
        except ModelBuildError as e:  # nnfuzz's own fault, shown and counted; the campaign goes on
            with self.lock:
                self._nnfuzz_error(rec, p.seed, str(e).splitlines()[0])
            return
        if t.verdict is not None and t.verdict.label == "timeout" and self.cfg.rerun and self.left() > 0:
            t = self._confirm_timeout(ctx, oracle, lane, p, t)
        verdict = t.verdict
        if verdict is None:
            with self.lock:
                self.log.write({**rec, "verdict": "cut", "note": "stopped by the campaign's time bound"})
            return
        fmt = lane.sandbox.format_for(p)
        rec.update(verdict=verdict.label, format=fmt, stage=verdict.stage and verdict.stage.value, seconds={
            "generate": round(p.gen_s, 4), "search": round(p.timings.get("search_s", 0.0), 4),
            "export": round(p.timings.get("export_s", 0.0), 4),
            **{k: round(v, 4) for k, v in t.result.seconds.items()}})
        if verdict.is_bug:
            rec.update(confirm_and_save(ctx, self.sink, oracle, lane, p, t, rec))
        elif verdict.label == "unsupported":
            rec["why"] = verdict.summary[:WHY_CHARS]  # the limitation the system stated, or the known entry's
        if worker is not None:
            rec["ended"] = round(c.elapsed, 3)
        with self.lock:  # counted and logged at once: campaign_end's count is the tests its log holds
            if self.ended:
                return  # ended by a signal while this test ran; a bug it found is saved all the same
            c.tests += 1
            if c.first_test is None:
                c.first_test = c.elapsed
            c.verdicts[verdict.label] += 1
            oracle.account(c, p, t)
            c.formats[fmt] += 1
            c.quantized += bool(p.rec.get("quantized"))
            self.log.write(rec)

    def _confirm_timeout(self, ctx: RunContext, oracle, lane, p: Produced, t):
        """A timeout is tested again with SLOW_PATIENCE times the time: a run that ends then was slow (a
        loaded machine, a long compile), not hung, and the test takes that run's verdict."""
        with self.clock.patience(SLOW_PATIENCE):
            again = oracle.test(ctx, lane, p, t.reference)
        if again.verdict is None or again.verdict.label == "timeout":
            return t
        with self.lock:
            self.counters.slow += 1
        self.note(f"seed {p.seed}: a timeout ran to the end given {SLOW_PATIENCE:g}x the time "
                  f"(slow, not hung): {again.verdict.label}")
        return again

    def _guide_news(self, p: Produced) -> None:
        """(Under the lock.) The coverage guide takes what ``p``'s graph covered and the reductions' new
        triggers, logs its state now and then, and passes what is new to the producers."""
        c = self.counters
        self.guide.merge(p.covered)
        self.sink.poll()
        self.guide.tick(c.tests, c.elapsed)
        c.guide = self.guide.summary()
        updates = self.guide.updates()
        if isinstance(self.producers, _local_producers()):
            self.producers.tell(updates)

    def lost(self, p: Produced, why: str) -> None:
        """A test lost with the process that ran it (fuzz/pool.py LostTest): counted and logged."""
        with self.lock:
            self.counters.lost += 1
            self.log.write({**p.rec, "verdict": "lost", "error": why})
        self.note(f"test of seed {p.seed} lost: {why}")

    def producer_died(self, record: dict) -> None:
        """A producer process died (fuzz/producer_watch.py) and was restarted: counted, logged with the
        seeds it held (to replay the crash: ``mgen.seed=S``) and its Python stack; the value search it died
        in, if any, is moved into the store with the command that replays it."""
        if record.get("search"):
            from nnfuzz.materialize.search_record import keep

            record.update(keep(Path(record["search"]), self.cfg.out))
        with self.lock:
            self.counters.producer_restarts += 1
            self.log.write({"producer_died": record})
        self.note(f"a producer died (exit code {record.get('exit_code')}) holding seeds {record.get('seeds')}; "
                  f"restarted ({self.counters.producer_restarts} so far); its stack is in {self.cfg.log or 'the log'}"
                  + (f"; replay the value search it died in: {record['replay']}" if record.get("replay") else ""))

    def producers_recycled(self, record: dict) -> None:
        """Fresh producers replaced the running ones (``fuzz.producer_growth``, ``fuzz.producer_models``):
        counted and logged."""
        with self.lock:
            self.counters.producer_recycles += 1
            self.log.write({"producers_recycled": record})

    def _guide_state(self) -> str:
        with self.lock:
            return self.guide.state.to_json()

    def add_seconds(self, phase: str, s: float) -> None:
        with self.lock:
            self.counters.seconds[phase] += s

    def _nnfuzz_error(self, rec, seed, msg: str) -> None:
        c = self.counters
        c.nnfuzz_errors += 1
        c.last_error = f"seed {seed}: {msg}"
        self.note(f"nnfuzz error (not a bug of {self.cfg.backend}) at seed {seed}: {msg}")
        self.log.write({**rec, "verdict": "nnfuzz-error", "error": msg})


def _local_producers():
    """The class of producer processes on this machine (imported when needed: it pulls in torch), the
    only producers the coverage guide talks to."""
    from nnfuzz.fuzz.producers import Producers

    return Producers
