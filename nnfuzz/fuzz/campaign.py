"""The campaign: a list of phases per test (produce: fuzz/produce.py; test and judge: fuzz/trial.py;
re-run and save: fuzz/saving.py), each with its own counters, under one hard time bound. This module
only orchestrates them."""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import nnfuzz
from nnfuzz.errors import ConfigError, InternalError
from nnfuzz.fuzz.produce import Produced, produce
from nnfuzz.fuzz.saving import confirm_and_save
from nnfuzz.fuzz.status import Counters, JsonLog, Status
from nnfuzz.fuzz.stopping import Stopped, StopRequest
from nnfuzz.fuzz.trial import test
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.materialize.onnx.spec import ExportSpec
from nnfuzz.triage.bugstore import BugStore
from nnfuzz.triage.dedup import Deduper


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


class Campaign:
    def __init__(self, cfg: CampaignConfig, ops: List[type], spec=None, stop: Optional[StopRequest] = None):
        from nnfuzz.fuzz.expected import ExpectedSide

        if cfg.policy.seed is None:
            raise InternalError("a campaign needs a concrete seed: run_campaign draws one for mgen.seed=null")
        self.cfg = cfg
        self.stop = stop or StopRequest()  # set by SIGINT/SIGTERM/SIGHUP (fuzz/stopping.py)
        self.ops = ops
        self.spec = spec or ExpectedSide("reference")
        self.expected = None             # the expected side's Sandbox, when it is another run than torch eager
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
        """The timeout of one sandbox run: fuzz.test_timeout, cut to the campaign's time left."""
        return max(0.05, min(self.cfg.test_timeout, self.left()))

    def run(self, sandbox, expected=None) -> Counters:
        """Run tests until the time bound (or max_tests). ``sandbox`` (and ``expected``, the sandbox of
        the oracle's expected side, if any) are started by the caller."""
        self.info = sandbox.backend_info
        self.expected = expected
        self.expected_info = expected.backend_info if expected is not None else None
        title = f"nnfuzz fuzz {self.cfg.backend} ({self.info.version})"
        try:
            with Status(self.counters, self.deadline, self.cfg.ui, title) as status:
                self.status = status
                self._announce()
                try:
                    self._test_until_done(sandbox)
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
            self.log.write({"campaign_end": {"stopped": self.stop.name, "tests": self.counters.tests}})
            self.log.close()
        return self.counters

    def _announce(self) -> None:
        """The campaign's seed, printed and as campaign.jsonl's first line for this campaign."""
        seed = self.cfg.policy.seed
        self.status.note(f"seed {seed}: rerun with mgen.seed={seed}")
        self.log.write({"campaign": {"seed": seed, "backend": self.cfg.backend, "oracle": self.spec.kind,
                                     "time_s": self.cfg.time_s, "nnfuzz": nnfuzz.__version__,
                                     "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}})

    def _test_until_done(self, sandbox) -> None:
        """Test until the time bound or max_tests; a stop signal ends it with ``Stopped``."""
        if self.cfg.source is not None:
            return self._run_migrated(sandbox)
        if self.cfg.producers > 0:
            self._run_with_producers(sandbox)
        seed = self.cfg.policy.seed
        while self.left() > 0.05 and not self._enough():
            self.stop.check()
            self.test_one(sandbox, seed)
            seed += 1
            self.status.refresh()

    def _enough(self) -> bool:
        return bool(self.cfg.max_tests and self.counters.tests >= self.cfg.max_tests)

    def _run_with_producers(self, sandbox) -> None:
        """Models come from producer processes (started early by run_campaign, else here); this
        process only tests."""
        from nnfuzz.fuzz.producers import Producers

        producers = self.producers or Producers(self.cfg, self.cfg.producers)
        try:
            producers.go(self.cfg, [c.name for c in self.ops], self.rows, self.left(), self.guide.state.to_json())
            while self.left() > 0.05 and not self._enough():
                self.stop.check()
                p = producers.get(timeout=min(0.25, max(0.01, self.left())))
                if p is None:
                    continue
                self.consume(sandbox, p)
                producers.tell(self.guide.updates())
                self.status.refresh()
        finally:
            producers.close()  # at once: models made from now on would never be tested

    def _run_migrated(self, sandbox) -> None:
        """The migrated tests of ``fuzz.source``, in priority order, until they or the time run out."""
        from nnfuzz.migrate.loader import migrated_tests

        for p in migrated_tests(self.cfg.source):
            if self.left() <= 0.05 or self._enough():
                break
            self.stop.check()
            self.consume(sandbox, p)
            self.status.refresh()

    # ---- one test -----------------------------------------------------------------------------
    def test_one(self, sandbox, seed: int) -> None:
        with self.stop.interruptible():  # nothing is written while a model is made
            p = produce(self.cfg, self.ops, self.rows, seed, self.left(), self.guide.guide if self.guide.enabled else None)
        self.consume(sandbox, p)
        self.guide.updates()  # (no producer to tell)

    def consume(self, sandbox, p: Produced) -> None:
        """Test a produced model (or account for why there is none)."""
        c, rec = self.counters, dict(p.rec)
        self.guide.merge(p.covered)
        self.guide.poll_reducer(self.reducer)
        self.guide.tick(c.tests, c.elapsed)
        c.guide = self.guide.summary()
        search_s = p.timings.get("search_s", 0.0)
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
        t = test(self, sandbox, p)
        verdict = t.verdict
        if verdict is None:
            self.log.write({**rec, "verdict": "cut", "note": "stopped by the campaign's time bound"})
            return
        c.tests += 1
        if c.first_test is None:
            c.first_test = c.elapsed
        c.verdicts[verdict.label] += 1
        if p.invalid is not None:
            c.invalid[f"{p.invalid['rule']}: {t.invalid_outcome}"] += 1
        fmt = sandbox.format_for(p)
        c.formats[fmt] += 1
        rec.update(verdict=verdict.label, format=fmt, stage=verdict.stage and verdict.stage.value, seconds={
            "generate": round(p.gen_s, 4), "search": round(p.timings.get("search_s", 0.0), 4),
            "export": round(p.timings.get("export_s", 0.0), 4),
            **{k: round(v, 4) for k, v in t.result.seconds.items()}})
        if verdict.is_bug:
            rec["bug"] = confirm_and_save(self, sandbox, p, t, rec)
        self.log.write(rec)

    def _nnfuzz_error(self, rec, seed, msg: str) -> None:
        c = self.counters
        c.nnfuzz_errors += 1
        c.last_error = f"seed {seed}: {msg}"
        self.status.note(f"nnfuzz error (not a bug of {self.cfg.backend}) at seed {seed}: {msg}")
        self.log.write({**rec, "verdict": "nnfuzz-error", "error": msg})


def run_campaign(cc: CampaignConfig) -> Counters:
    """Draw the seed (``mgen.seed=null``), start the sandbox (a backend that cannot run fails here,
    before any test), probe op support unless disabled, and run the campaign until its time bound or a
    stop signal (SIGINT, SIGTERM, SIGHUP: ``Counters.stopped`` names it; fuzz/stopping.py)."""
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

    from nnfuzz.fuzz.expected import ExpectedSide, expected_side
    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.generate.opset import select_ops, usable_with

    spec = ExpectedSide("metamorphic" if cc.oracle == "metamorphic" else "reference") if cc.backend_path else \
        expected_side(cc.oracle, cc.backend, cc.backend_options, cc.cmp_with)

    def sandbox_for(name, options, path=None):
        return Sandbox(name, options, test_timeout=cc.test_timeout, memory_limit_mb=cc.memory_limit_mb,
                       backend_path=path, stop=stop)

    if cc.source is not None:  # migrated tests: no generation, so no producers and no op probing
        cc = dataclasses.replace(cc, producers=0, probe=False)
    with contextlib.ExitStack() as stack:
        producers = None
        if cc.producers > 0:  # first: their imports and warm-up overlap the sandbox's start and the probe
            from nnfuzz.fuzz.producers import Producers

            producers = Producers(cc, cc.producers)
            stack.callback(producers.close)
        sandbox = stack.enter_context(sandbox_for(cc.backend, cc.backend_options, cc.backend_path))
        expected = None
        if spec.expected is not None:
            expected = stack.enter_context(sandbox_for(spec.expected, spec.expected_options))
        sides = [sandbox] + ([expected] if expected else [])
        if cc.source is not None and any(s.format != "onnx" for s in sides):
            raise ConfigError(f"fuzz.source={cc.source} holds ONNX models, but {[s.backend for s in sides if s.format != 'onnx']} "
                              "take nnfuzz graphs, which migrated tests do not have; use an ONNX backend (ort-cpu, "
                              "tvm-cpu, openvino-cpu, ...)")
        if cc.policy.invalid > 0 and sandbox.format != "onnx":
            raise ConfigError(f"mgen.invalid={cc.policy.invalid} breaks ONNX models; {cc.backend} takes "
                              f"{sandbox.format}: use an ONNX backend (ort-cpu, tvm-cpu, ...) or mgen.invalid=0")
        lowerings = {s.backend_info.lowering for s in sides}
        cc = dataclasses.replace(cc, onnx=any(s.format == "onnx" for s in sides))
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
            campaign.ops = probe_support(sandbox, ops, cc, campaign)
            if spec.kind == "metamorphic" and not cc.rewrites:
                from nnfuzz.fuzz.rewrite_probe import probe_rewrites

                cc = campaign.cfg = dataclasses.replace(cc, rewrites=tuple(probe_rewrites(sandbox, cc)))
        return campaign.run(sandbox, expected)
