"""The campaign: a list of phases per test (produce: fuzz/produce.py; test and judge: fuzz/trial.py;
re-run and save: fuzz/saving.py), each with its own counters, under one hard time bound. This module
only orchestrates them."""
from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import nnfuzz
from nnfuzz.errors import ConfigError, InternalError, ModelBuildError
from nnfuzz.fuzz.produce import Produced
from nnfuzz.fuzz.saving import confirm_and_save
from nnfuzz.fuzz.status import Counters, JsonLog, Status
from nnfuzz.fuzz.stopping import Stopped, StopRequest
from nnfuzz.fuzz.trial import test
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.materialize.onnx.spec import ExportSpec
from nnfuzz.triage.bugstore import BugStore
from nnfuzz.triage.dedup import Deduper

SLOW_PATIENCE = 3.0  # a timeout is confirmed with this many times fuzz.test_timeout


def _default_search():
    from nnfuzz.materialize.search import SearchConfig

    return SearchConfig()


@dataclasses.dataclass
class CampaignConfig:
    backend: str
    backend_options: Dict
    policy: GenPolicy
    time_s: float
    out: Path
    test_timeout: float = 10.0
    memory_limit_mb: int = 4096
    rerun: bool = True
    max_tests: int = 0
    log: Optional[str] = "campaign.jsonl"
    tolerances: Dict[str, tuple] = dataclasses.field(default_factory=dict)
    export: ExportSpec = dataclasses.field(default_factory=lambda: ExportSpec(opset=None))  # the models' template
    ui: str = "auto"
    probe: bool = True
    debug: bool = False
    backend_path: Optional[str] = None   # "module:Class" instead of a registry name (tests)
    producers: int = 0                   # processes generating models in parallel (0: in this process)
    search: Optional[object] = dataclasses.field(default_factory=_default_search)  # SearchConfig | None
    reduce: bool = False                 # shrink each bug with a new signature right after saving it
    reduce_s: float = 30.0               # time budget per reduction
    oracle: str = "reference"            # reference | optlevel | devices | metamorphic (fuzz/expected.py)
    rewrites: Tuple[str, ...] = ()       # oracle=metamorphic: the rewrite kinds to draw from (empty: all)
    cmp_with: Optional[str] = None       # a second system to compare with (oracle "cmp")
    onnx: bool = True                    # export ONNX (False when no side of the oracle takes ONNX)
    source: Optional[Path] = None        # a folder of migrated tests (nnfuzz migrate), tested in priority order
    workers: object = 1                  # sandboxes testing at once: N or "auto" (fuzz/sizing.py, fuzz/pool.py)
    executor: str = "local"              # local (sandbox processes here) | ray (Ray actors: fuzz/ray_executor.py)
    ray_address: Optional[str] = "auto"  # ray.init's address: auto | HOST:PORT | None (start a Ray here)
    tested_seeds: Optional[tuple] = None  # seed ranges the store already tested (fuzz/resume.py; None: not read yet)


class Campaign:
    def __init__(self, cfg: CampaignConfig, ops: List[type], spec=None, stop: Optional[StopRequest] = None):
        from nnfuzz.fuzz.expected import ExpectedSide

        if cfg.policy.seed is None:
            raise InternalError("a campaign needs a concrete seed: run_campaign draws one for mgen.seed=null")
        self.cfg = cfg
        self.stop = stop or StopRequest()  # set by SIGINT/SIGTERM/SIGHUP (fuzz/stopping.py)
        self.ops = ops
        self.spec = spec or ExpectedSide("reference")
        self.expected = None             # lane 0's expected-side Sandbox, when it is another run than torch eager
        self._expected_of: Dict[int, object] = {}  # id(a lane's sandbox) -> that lane's expected-side sandbox
        self.lock = threading.RLock()    # counters, log, dedup index and bug store: lanes are threads (fuzz/pool.py)
        self.seeds_done: List[int] = []  # seeds this campaign consumed (fuzz/resume.py)
        self._patience = threading.local()  # a lane confirming a timeout waits longer (``patience``)
        self.claimed = 0                 # tests lanes have taken on and not finished (see ``claim``)
        self._state_at = time.monotonic()
        self.reducer = None              # the background reducer (fuzz.reduce), started with the first bug
        self.expected_info = None        # the expected side's BackendInfo, when it is another system
        self.deadline = time.monotonic() + cfg.time_s
        self.counters = Counters()
        from nnfuzz.fuzz.guidestate import CampaignGuide  # first: a corrupt guide_state.json stops us before any write

        self.guide = CampaignGuide(cfg.out, None, cfg.policy.guide == "coverage" and cfg.source is None,
                                   cfg.policy.guide_bugs)
        self.store = BugStore(cfg.out)
        self.dedup = Deduper(cfg.out)
        self.counters.unique_bugs = self.dedup.unique
        self.log = self.guide.log = JsonLog(cfg.out / cfg.log if cfg.log else None, self.counters.started)
        self.info = None                 # the system under test's BackendInfo (backends/base.py)
        self.rows: Dict[str, set] = {}   # op name -> supported dtype rows (from probing)
        self.producers = None            # fuzz.producers.Producers started by run_campaign (else by run)

    @property
    def tolerances(self) -> Dict[str, tuple]:
        """(rtol, atol) per dtype: the configured ones, else the verdict's defaults."""
        from nnfuzz.verdict import DEFAULT_TOLERANCES

        return {k: tuple(v) for k, v in self.cfg.tolerances.items()} or dict(DEFAULT_TOLERANCES)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def run_timeout(self) -> float:
        """The timeout of one sandbox run: ``full_timeout``, cut to the campaign's time left."""
        return max(0.05, min(self.full_timeout(), self.left()))

    def full_timeout(self) -> float:
        """fuzz.test_timeout, times SLOW_PATIENCE while this thread confirms a timeout (``patience``)."""
        return self.cfg.test_timeout * getattr(self._patience, "scale", 1.0)

    @contextlib.contextmanager
    def patience(self, scale: float):
        self._patience.scale = scale
        try:
            yield
        finally:
            self._patience.scale = 1.0

    def _confirm_timeout(self, sandbox, p: Produced, t):
        """A timeout is tested again with SLOW_PATIENCE times the time: a run that ends then was slow (a
        loaded machine, a long compile), not hung, and the test takes that run's verdict."""
        from nnfuzz.fuzz.trial import test

        with self.patience(SLOW_PATIENCE):
            again = test(self, sandbox, p, t.reference)
        if again.verdict is None or again.verdict.label == "timeout":
            return t
        with self.lock:
            self.counters.slow += 1
        self.status.note(f"seed {p.seed}: a timeout ran to the end given {SLOW_PATIENCE:g}x the time "
                         f"(slow, not hung): {again.verdict.label}")
        return again

    def pair_lanes(self, lanes) -> None:
        """Which expected-side sandbox goes with which lane's sandbox (fuzz/pool.py)."""
        self._expected_of = {id(lane.sandbox): lane.expected for lane in lanes}

    def expected_of(self, sandbox):
        """The expected side's sandbox of ``sandbox``'s lane (None when torch eager is the expected side)."""
        return self._expected_of.get(id(sandbox), self.expected)

    def seed_at(self, i: int) -> int:
        """The seed of the campaign's ``i``-th model: seeds the store already tested are skipped."""
        from nnfuzz.fuzz.resume import seed_at

        return seed_at(self.cfg.policy.seed, self.cfg.tested_seeds or (), i)

    def run(self, lanes) -> Counters:
        """Run tests on ``lanes`` (fuzz/pool.py Lane: a sandbox and its expected side's, started by the
        caller) until the time bound (or max_tests)."""
        from nnfuzz.fuzz.pool import Pool

        pool = Pool(self, lanes)
        self.counters.workers = len(lanes)
        self.info = lanes[0].sandbox.backend_info
        self.expected = lanes[0].expected
        self.expected_info = self.expected.backend_info if self.expected is not None else None
        title = f"nnfuzz fuzz {self.cfg.backend} ({self.info.version})"
        try:
            with Status(self.counters, self.deadline, self.cfg.ui, title, lanes) as status:
                self.status = status
                self._announce()
                try:
                    self._test_until_done(pool)
                except Stopped as e:
                    status.note(f"{e.name}: stopping the campaign (producers, workers and reducer end)")
                if self.reducer is not None:
                    self.reducer.close()
                    self.guide.poll_reducer(self.reducer)  # triggers of the last reductions, kept for the next run
                    self.counters.reduced = sum(r.get("status") == "reduced" for r in self.reducer.results)
        except Stopped:
            pass  # a second signal while closing down: the counters so far are the campaign's result
        finally:
            self.counters.stopped = self.stop.name
            self.guide.tick(self.counters.tests, self.counters.elapsed, force=True)
            self.record_seeds()
            self.log.write({"campaign_end": {"stopped": self.stop.name, "tests": self.counters.tests,
                                             "lost": self.counters.lost}})
            self.log.close()
        return self.counters

    def record_seeds(self, every: float = 0.0) -> None:
        """Write the store's campaign_state.json (fuzz/resume.py), at most once per ``every`` seconds."""
        from nnfuzz.fuzz.resume import write_state

        if self.cfg.source is not None or time.monotonic() - self._state_at < every:
            return
        self._state_at = time.monotonic()
        with self.lock:
            done = list(self.seeds_done)
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
        """The campaign's seed, printed and as campaign.jsonl's first line for this campaign."""
        seed = self.cfg.policy.seed
        resumed = self.cfg.tested_seeds
        self.status.note(f"seed {seed}: rerun with mgen.seed={seed}" + (
            f" (resuming: {sum(hi - lo for lo, hi in resumed)} seeds tested before into {self.cfg.out} are skipped)"
            if resumed else ""))
        self.log.write({"campaign": {"seed": seed, "backend": self.cfg.backend, "oracle": self.spec.kind,
                                     "time_s": self.cfg.time_s, "nnfuzz": nnfuzz.__version__,
                                     "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}})

    def _test_until_done(self, pool) -> None:
        """Test until the time bound or max_tests; a stop signal ends it with ``Stopped``. Models come
        from the migrated tests, from producers (started early by run_campaign, else here), or are made
        in the lanes' own threads."""
        from nnfuzz.fuzz import pool as pools

        if self.cfg.source is not None:
            from nnfuzz.migrate.loader import migrated_tests

            return pool.run(pools.iter_source(migrated_tests(self.cfg.source)))
        if self.cfg.producers <= 0:
            return pool.run(pools.inline_source(self, threading.Lock()))
        from nnfuzz.fuzz.executors import make_producers

        producers = self.producers = self.producers or make_producers(self.cfg)
        try:
            if isinstance(producers, _local_producers()):  # (Ray's producer actors are not guided yet)
                producers.go(self.cfg, [c.name for c in self.ops], self.rows, self.left(), self.guide.state.to_json())
            else:
                producers.go(self.cfg, [c.name for c in self.ops], self.rows, self.left())
            pool.run(pools.queue_source(producers, self))
        finally:
            producers.close()  # at once: models made from now on would never be tested

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
    def consume(self, sandbox, p: Produced, worker: Optional[str] = None) -> None:
        """Test a produced model (or account for why there is none). Lanes call it from their threads
        (``worker``: the lane's name, logged with the test's start and end): the accounting holds the
        campaign's lock, the test itself does not."""
        c, rec = self.counters, dict(p.rec)
        if worker is not None:
            rec.update(worker=worker, began=round(c.elapsed, 3))
        search_s = p.timings.get("search_s", 0.0)
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
            if p.values_undefined and p.invalid is None and self.spec.kind != "metamorphic":
                # undefined behaviour: whatever the system does is right (the metamorphic oracle compares the
                # system with itself, and an invalid model must be rejected whatever its values)
                c.undefined_values += 1
                self.log.write({**rec, "verdict": "undefined-values", "blocker": p.search.get("blocker")})
                return
            if self.spec.kind == "metamorphic" and p.rewrite_bytes is None and p.invalid is None:
                c.no_rewrite += 1
                self.log.write({**rec, "verdict": "no-rewrite"})
                return
        if self.left() <= 0:
            return
        try:
            t = test(self, sandbox, p)
        except ModelBuildError as e:  # nnfuzz's own fault, shown and counted; the campaign goes on
            with self.lock:
                self._nnfuzz_error(rec, p.seed, str(e).splitlines()[0])
            return
        if t.verdict is not None and t.verdict.label == "timeout" and self.cfg.rerun and self.left() > 0:
            t = self._confirm_timeout(sandbox, p, t)
        verdict = t.verdict
        if verdict is None:
            with self.lock:
                self.log.write({**rec, "verdict": "cut", "note": "stopped by the campaign's time bound"})
            return
        fmt = sandbox.format_for(p)
        with self.lock:
            c.tests += 1
            if c.first_test is None:
                c.first_test = c.elapsed
            c.verdicts[verdict.label] += 1
            if p.invalid is not None:
                c.invalid[f"{p.invalid['rule']}: {t.invalid_outcome}"] += 1
            c.formats[fmt] += 1
        rec.update(verdict=verdict.label, format=fmt, stage=verdict.stage and verdict.stage.value, seconds={
            "generate": round(p.gen_s, 4), "search": round(p.timings.get("search_s", 0.0), 4),
            "export": round(p.timings.get("export_s", 0.0), 4),
            **{k: round(v, 4) for k, v in t.result.seconds.items()}})
        if verdict.is_bug:
            rec["bug"] = confirm_and_save(self, sandbox, p, t, rec)
        if worker is not None:
            rec["ended"] = round(c.elapsed, 3)
        with self.lock:
            self.log.write(rec)

    def _guide_news(self, p: Produced) -> None:
        """(Under the lock.) The coverage guide takes what ``p``'s graph covered and the reductions' new
        triggers, logs its state now and then, and passes what is new to the producers."""
        c = self.counters
        self.guide.merge(p.covered)
        self.guide.poll_reducer(self.reducer)
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
        self.status.note(f"test of seed {p.seed} lost: {why}")

    def add_seconds(self, phase: str, s: float) -> None:
        with self.lock:
            self.counters.seconds[phase] += s

    def _nnfuzz_error(self, rec, seed, msg: str) -> None:
        c = self.counters
        c.nnfuzz_errors += 1
        c.last_error = f"seed {seed}: {msg}"
        self.status.note(f"nnfuzz error (not a bug of {self.cfg.backend}) at seed {seed}: {msg}")
        self.log.write({**rec, "verdict": "nnfuzz-error", "error": msg})


def _local_producers():
    """The class of producer processes on this machine (imported when needed: it pulls in torch), the
    only producers the coverage guide talks to."""
    from nnfuzz.fuzz.producers import Producers

    return Producers


def run_campaign(cc: CampaignConfig) -> Counters:
    """Read the store's tested seeds (fuzz/resume.py), draw the seed (``mgen.seed=null``), start the
    sandboxes (a backend that cannot run fails here, before any test), probe op support unless disabled,
    and run the campaign until its time bound or a stop signal (SIGINT, SIGTERM, SIGHUP:
    ``Counters.stopped`` names it; fuzz/stopping.py)."""
    from nnfuzz.fuzz.resume import plan

    cc = plan(cc)
    cc = dataclasses.replace(cc, policy=cc.policy.with_concrete_seed())
    stop = StopRequest()
    with stop.on_signals():
        try:
            counters = _start_and_run(cc, stop)
        except Stopped:  # while the sandbox started or probing ran: nothing was tested
            counters = Counters()
        counters.stopped = stop.name
    return counters


def _start_and_run(cc: CampaignConfig, stop: StopRequest) -> Counters:
    import contextlib

    from nnfuzz.fuzz.executors import make_executor, make_producers
    from nnfuzz.fuzz.expected import ExpectedSide, expected_side
    from nnfuzz.fuzz.pool import Lane, close_lanes, more_lanes
    from nnfuzz.fuzz.sizing import thread_env
    from nnfuzz.generate.opset import select_ops, usable_with

    spec = ExpectedSide("metamorphic" if cc.oracle == "metamorphic" else "reference") if cc.backend_path else \
        expected_side(cc.oracle, cc.backend, cc.backend_options, cc.cmp_with)
    with contextlib.ExitStack() as stack:
        executor = make_executor(cc, stack)
        workers = executor.workers(cc)
        env = thread_env(workers)

        def lane(k: int) -> Lane:
            sandbox = executor.sandbox(cc, cc.backend, cc.backend_options, cc.backend_path, stop, env)
            expected = None
            if spec.expected is not None:
                expected = executor.sandbox(cc, spec.expected, spec.expected_options, None, stop, env, expected=True)
            return Lane(f"w{k}", sandbox, expected)

        if cc.source is not None:  # migrated tests: no generation, so no producers and no op probing
            cc = dataclasses.replace(cc, producers=0, probe=False)
        producers = None
        if cc.producers > 0:  # first: their imports and warm-up overlap the sandbox's start and the probe
            producers = make_producers(cc, executor)
            stack.callback(producers.close)
        first = lane(0)
        lanes = [first]
        stack.callback(lambda: close_lanes(lanes))
        for sb in (first.sandbox, first.expected):
            if sb is not None:
                sb.start()
        lanes += more_lanes(lane, workers)  # starting while lane 0 probes
        sides = [s for s in (first.sandbox, first.expected) if s is not None]
        if cc.source is not None and any(s.format != "onnx" for s in sides):
            raise ConfigError(f"fuzz.source={cc.source} holds ONNX models, but {[s.backend for s in sides if s.format != 'onnx']} "
                              "take nnfuzz graphs, which migrated tests do not have; use an ONNX backend (ort-cpu, "
                              "tvm-cpu, openvino-cpu, ...)")
        if cc.policy.invalid > 0 and first.sandbox.format != "onnx":
            raise ConfigError(f"mgen.invalid={cc.policy.invalid} breaks ONNX models; {cc.backend} takes "
                              f"{first.sandbox.format}: use an ONNX backend (ort-cpu, tvm-cpu, ...) or mgen.invalid=0")
        lowerings = {s.backend_info.lowering for s in sides}
        cc = dataclasses.replace(cc, onnx=any(s.format == "onnx" for s in sides), workers=workers)
        if cc.search is not None and any(s.backend_info.int64_bits == 32 for s in sides):
            cc = dataclasses.replace(cc, search=dataclasses.replace(cc.search, int64_bits=32))
        via = cc.export.via if cc.onnx else None
        ops = select_ops(cc.policy, usable=usable_with(lowerings, via), dialects=() if "torch" in lowerings else lowerings)
        campaign = Campaign(cc, ops, spec, stop)
        campaign.producers = producers
        if cc.probe:
            from nnfuzz.fuzz.probe import probe_opsets, probe_support

            if cc.onnx and cc.export.opset is None:
                cc = campaign.cfg = dataclasses.replace(cc, export=probe_opsets(
                    [s for s in sides if s.format == "onnx"], cc, campaign))
            campaign.ops = probe_support(first.sandbox, ops, cc, campaign)
            if spec.kind == "metamorphic" and not cc.rewrites:
                from nnfuzz.fuzz.rewrite_probe import probe_rewrites

                cc = campaign.cfg = dataclasses.replace(cc, rewrites=tuple(probe_rewrites(first.sandbox, cc)))
        return campaign.run(lanes)
