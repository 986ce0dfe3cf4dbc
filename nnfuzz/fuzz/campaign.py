"""The campaign: a list of phases per test (generate, materialize, test, judge, re-run, save), each
with its own counters, under one hard time bound."""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Dict, List, Optional

import nnfuzz
from nnfuzz.errors import ConstraintError, InternalError, NNFuzzError
from nnfuzz.fuzz.status import Counters, JsonLog, Status
from nnfuzz.fuzz.stopping import Stopped, StopRequest
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.materialize.values import all_finite
from nnfuzz.oracle import Symptom, Verdict, judge
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
    opset: int = 17
    export_timeout_s: float = 30.0
    ui: str = "auto"
    probe: bool = True
    debug: bool = False
    backend_path: Optional[str] = None   # "module:Class" instead of a registry name (tests)
    producers: int = 0                   # processes generating models in parallel (0: in this process)
    search: Optional[object] = dataclasses.field(default_factory=_default_search)  # SearchConfig | None
    reduce: bool = False                 # shrink each bug with a new signature right after saving it
    reduce_s: float = 30.0               # time budget per reduction
    oracle: str = "reference"            # reference | optlevel | devices (fuzz/oracles.py)
    cmp_with: Optional[str] = None       # a second system to compare with (oracle "cmp")
    onnx: bool = True                    # export ONNX (False when no side of the oracle takes ONNX)


class Campaign:
    def __init__(self, cfg: CampaignConfig, ops: List[type], spec=None, stop: Optional[StopRequest] = None):
        from nnfuzz.fuzz.oracles import OracleSpec

        if cfg.policy.seed is None:
            raise InternalError("a campaign needs a concrete seed: run_campaign draws one for mgen.seed=null")
        self.cfg = cfg
        self.stop = stop or StopRequest()  # set by SIGINT/SIGTERM/SIGHUP (fuzz/stopping.py)
        self.ops = ops
        self.spec = spec or OracleSpec("reference")
        self.expected = None             # the expected side's Sandbox, when it is another run than torch eager
        self.reducer = None              # the background reducer (fuzz.reduce), started with the first bug
        self.expected_info: Dict = {}
        self.deadline = time.monotonic() + cfg.time_s
        self.counters = Counters()
        self.store = BugStore(cfg.out)
        self.dedup = Deduper(cfg.out)
        self.counters.unique_bugs = self.dedup.unique
        self.log = JsonLog(cfg.out / cfg.log if cfg.log else None)
        self.info: Dict = {}
        self.rows: Dict[str, set] = {}   # op name -> supported dtype rows (from probing)

    @property
    def tolerances(self) -> Dict[str, tuple]:
        """(rtol, atol) per dtype: the configured ones, else the oracle's defaults."""
        from nnfuzz.oracle import DEFAULT_TOLERANCES

        return {k: tuple(v) for k, v in self.cfg.tolerances.items()} or dict(DEFAULT_TOLERANCES)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def run(self, sandbox, expected=None) -> Counters:
        """Run tests until the time bound (or max_tests). ``sandbox`` (and ``expected``, the sandbox of
        the oracle's expected side, if any) are started by the caller."""
        self.info = sandbox.info
        self.expected = expected
        self.expected_info = expected.info if expected is not None else {}
        title = f"nnfuzz fuzz {self.cfg.backend} ({self.info.get('version', '?')})"
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
                    self.counters.reduced = sum(r.get("status") == "reduced" for r in self.reducer.results)
        except Stopped:
            pass  # a second signal while closing down: the counters so far are the campaign's result
        finally:
            self.counters.stopped = self.stop.name
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
        """Models come from ``producers`` processes (seeds interleaved); this process only tests."""
        import multiprocessing as mp
        import queue as queue_mod

        ctx = mp.get_context("spawn")
        n = self.cfg.producers
        q, done = ctx.Queue(maxsize=2 * n), ctx.Event()
        wall_deadline = time.time() + self.left()
        procs = [ctx.Process(target=_producer_main, daemon=True,
                             args=(self.cfg, [c.name for c in self.ops], self.rows, self.cfg.policy.seed + k, n,
                                   q, done, wall_deadline)) for k in range(n)]
        try:
            for proc in procs:
                proc.start()
            while self.left() > 0.05 and not self._enough():
                self.stop.check()
                try:
                    p = q.get(timeout=min(0.25, max(0.01, self.left())))
                except queue_mod.Empty:
                    if not any(proc.is_alive() for proc in procs):
                        raise NNFuzzError(f"all {n} producer processes exited (exit codes "
                                          f"{[proc.exitcode for proc in procs]}); see the messages above")
                    continue
                self.consume(sandbox, p)
                self.status.refresh()
        finally:  # a producer still busy with a model after a second is killed: no one reads the queue now
            done.set()
            end = time.monotonic() + 1.0
            for proc in [pr for pr in procs if pr.pid is not None]:  # (pid None: never started)
                proc.join(max(0.0, end - time.monotonic()))
                if proc.is_alive():
                    proc.kill()
                    proc.join(1.0)
            q.close()
            q.cancel_join_thread()

    # ---- one test -----------------------------------------------------------------------------
    def test_one(self, sandbox, seed: int) -> None:
        with self.stop.interruptible():  # nothing is written while a model is made
            p = produce(self.cfg, self.ops, self.rows, seed, self.left())
        self.consume(sandbox, p)

    def consume(self, sandbox, p: "Produced") -> None:
        """Test a produced model (or account for why there is none)."""
        c, rec = self.counters, dict(p.rec)
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
        if self.left() <= 0:
            return
        p.side = "actual"
        verdict, res = self._test(sandbox, p)
        if verdict is None:
            self.log.write({**rec, "verdict": "cut", "note": "stopped by the campaign's time bound"})
            return
        c.tests += 1
        c.verdicts[verdict.label] += 1
        rec.update(verdict=verdict.label, stage=verdict.stage and verdict.stage.value, seconds={
            "generate": round(p.gen_s, 4), "search": round(p.timings.get("search_s", 0.0), 4),
            "export": round(p.timings.get("export_s", 0.0), 4),
            **{k: round(v, 4) for k, v in res.seconds.items()}})
        if verdict.is_bug:
            rec["bug"] = self._confirm_and_save(sandbox, p, verdict, res, rec)
        self.log.write(rec)

    def _nnfuzz_error(self, rec, seed, msg: str) -> None:
        c = self.counters
        c.nnfuzz_errors += 1
        c.last_error = f"seed {seed}: {msg}"
        self.status.note(f"nnfuzz error (not a bug of {self.cfg.backend}) at seed {seed}: {msg}")
        self.log.write({**rec, "verdict": "nnfuzz-error", "error": msg})

    def _run_on(self, sandbox, p: "Produced"):
        """Run ``p`` on ``sandbox``; None when the campaign's own time bound cut it short."""
        timeout = max(0.05, min(self.cfg.test_timeout, self.left()))
        res = sandbox.run(p.payload(sandbox.format), p.oracle.input, timeout=timeout)
        if res.status == "timeout" and timeout < self.cfg.test_timeout:
            return None  # cut short by the campaign's own time bound: not tested, not a timeout
        for k, v in res.seconds.items():
            self.counters.seconds[k] += v
        return res

    def _expected_outputs(self, p: "Produced"):
        """(outputs to compare with, None) or (None, a verdict saying why there are none). Torch eager's
        outputs unless the oracle runs another system; undefined (None) stays undefined."""
        if self.expected is None or p.oracle.output is None:
            return p.oracle.output, None
        res = self._run_on(self.expected, p)
        if res is None:
            return None, "cut"
        if res.status != "ok":
            system = self.expected_info.get("system") or self.spec.expected.split("-")[0]
            v = judge(res, None, system, self.tolerances)
            if not v.is_bug:
                return None, Verdict.unsupported(f"the expected side ({self.spec.expected}): {v.summary}", v.detail)
            p.side = "expected"  # a bug of the expected side's system: saved under its name
            return None, v
        outs = res.outputs or {}
        if not all_finite(outs):
            return None, None  # NaN/Inf on the expected side: undefined, nothing to compare
        return outs, None

    def _test(self, sandbox, p: "Produced"):
        res = self._run_on(sandbox, p)
        if res is None:
            return None, res
        system = self.info.get("system") or self.cfg.backend.split("-")[0]
        expected, why = (None, None) if res.status != "ok" else self._expected_outputs(p)
        if why == "cut":
            return None, res
        if why is not None:
            return why, res
        p.expected = expected

        def verdict_now():
            o = p.oracle
            return judge(res, expected, system, self.tolerances, twin=o.output_f64, jitter=o.output_f64_jitter)

        verdict = verdict_now()
        if verdict.symptom is Symptom.inconsistency and p.oracle.output_f64 is None:
            t0 = time.perf_counter()
            p.add_twins()  # the float64 twins decide whether this disagreement is only noise
            self.counters.seconds["export"] += time.perf_counter() - t0
            verdict = verdict_now()
        return verdict, res

    def _localize(self, sandbox, p: "Produced") -> dict:
        """meta.json's first_divergent_node and blame for an inconsistency (triage/localize.py)."""
        from nnfuzz.errors import NNFuzzError
        from nnfuzz.gir import GraphIR
        from nnfuzz.triage.localize import localize

        def run(model, inputs):
            if self.left() <= 0:
                return None
            r = sandbox.run_model(model, inputs, timeout=max(0.05, min(self.cfg.test_timeout, self.left())))
            return r.outputs if r.status == "ok" else None

        t0 = time.perf_counter()
        try:
            loc = localize(GraphIR.loads(p.gir_text), p.weights, p.oracle.input, run, self.tolerances,
                           self.cfg.opset).to_meta()
        except NNFuzzError as e:  # e.g. the exposed graph does not export: recorded, not fatal
            loc = {"first_divergent_node": None, "blame": "undecided",
                   "localization_note": f"localization failed: {type(e).__name__}: {e}"}
        self.counters.seconds["triage"] += time.perf_counter() - t0
        return loc

    def _reduce(self, path) -> None:
        """Hand a just-saved bug to the background reducer (fuzz/reducer.py), started on first use."""
        if self.reducer is None:
            from nnfuzz.fuzz.reducer import BackgroundReducer
            from nnfuzz.fuzz.sandbox import Sandbox

            cc = self.cfg

            def make_sandbox(system, options):
                return Sandbox(system, options, test_timeout=cc.test_timeout, memory_limit_mb=cc.memory_limit_mb,
                               backend_path=cc.backend_path if system == cc.backend else None, stop=self.stop)

            def add_seconds(s):
                self.counters.seconds["triage"] += s

            self.reducer = BackgroundReducer(make_sandbox, self.tolerances, cc.opset, cc.reduce_s, self.deadline,
                                             self.store.lock, self.status.note, add_seconds)
        self.reducer.submit(path)

    def _oracle_meta(self, side: str) -> dict:
        """meta.json's ``oracle``: which oracle found the bug, and both sides' systems and versions."""
        under_test = {"system": self.cfg.backend, "version": self.info.get("version"),
                      "version_id": self.info.get("version_id"), "options": self.cfg.backend_options}
        if self.expected is None:
            import torch

            other = {"system": "torch-eager", "version": torch.__version__, "version_id": torch.version.git_version}
        else:
            other = {"system": self.spec.expected, "version": self.expected_info.get("version"),
                     "version_id": self.expected_info.get("version_id"), "options": self.spec.expected_options}
        return {"kind": self.spec.kind, "side": side, "under_test": under_test, "expected": other}

    def _tf_writer(self, p: "Produced"):
        """A writer of the ``model/`` SavedModel folder for bugs of TF systems (None for the others)."""
        if (self.expected_info if p.side == "expected" else self.info).get("lowering") != "tf":
            return None
        from nnfuzz.materialize.tensorflow.module import saved_model_writer

        return saved_model_writer(p.gir_text, p.weights)

    def _confirm_and_save(self, sandbox, p: "Produced", verdict: Verdict, res, rec) -> str:
        c = self.counters
        flaky, side, expected = False, p.side, p.expected
        if self.cfg.rerun and self.left() > 0:
            again, _ = self._test(sandbox, p)
            flaky = again is not None and again.label != verdict.label
            p.side, p.expected = side, expected
        info, system = (self.expected_info, self.spec.expected) if p.side == "expected" else (self.info, self.cfg.backend)
        meta = {
            "system": system, "version": info.get("version"), "symptom": verdict.symptom.value,
            "version_id": info.get("version_id"), "stage": verdict.stage.value, "seed": p.seed,
            "flaky": flaky, "summary": verdict.summary, "errors": verdict.errors,
            "nodes": rec.get("nodes"), "ops": rec.get("ops"), "nnfuzz": nnfuzz.__version__,
            "backend_options": self.spec.expected_options if p.side == "expected" else self.cfg.backend_options,
            "policy": dataclasses.asdict(self.cfg.policy),
            "opset": self.cfg.opset, "timings": rec.get("seconds", {}), "signal": res.signal,
            "search": p.search, "format": (self.expected if p.side == "expected" else sandbox).format,
            "oracle": self._oracle_meta(p.side),
            **(self._localize(sandbox, p) if verdict.symptom is Symptom.inconsistency else {}),
        }
        err_log = f"{verdict.summary}\n\n{verdict.detail}\n"
        meta["signature"], meta["duplicate_of"] = self.dedup.check(meta, err_log)
        # what the system was compared with: the other side's outputs when another system ran (None if it
        # never got to run, e.g. after a crash of the system under test), else the torch reference
        other_side = self.expected is not None and p.side == "actual"
        oracle = {**p.oracle.to_dict(), "output": p.expected if other_side else p.oracle.output}
        path = self.store.save(model_bytes=p.payload(meta["format"]), gir_text=p.gir_text, oracle=oracle,
                               meta=meta, err_log=err_log, fmt=meta["format"], tf_model=self._tf_writer(p))
        self.dedup.saved(meta["signature"], path.name)
        c.bugs_saved += 1
        c.new_unique += meta["duplicate_of"] is None
        c.unique_bugs = self.dedup.unique
        c.flaky += flaky
        c.last_bug = f"{path.name}: {verdict.label} at {verdict.stage.value}: {verdict.summary[:100]}"
        if self.cfg.reduce and meta["duplicate_of"] is None and self.left() > 0:
            self._reduce(path)
        dup = f" (duplicate of {meta['duplicate_of']})" if meta["duplicate_of"] else ""
        flag = " (flaky)" if flaky else ""
        self.status.note(f"bug saved: {path}{dup}  {verdict.label}@{verdict.stage.value}{flag}: {verdict.summary[:160]}")
        return str(path)


@dataclasses.dataclass
class Produced:
    """A model ready to test (or why there is none), made in this process or in a producer process."""
    seed: int
    rec: Dict
    gen_s: float = 0.0
    build_s: float = 0.0
    error: Optional[tuple] = None        # ("no-graph" | "nnfuzz-error", message)
    gir_text: Optional[str] = None
    model_bytes: Optional[bytes] = None
    oracle: object = None                # materialize.model.Oracle
    weights: Dict = dataclasses.field(default_factory=dict)  # the model's weights (to rebuild it)
    search: Optional[Dict] = None        # the value search's summary
    timings: Dict = dataclasses.field(default_factory=dict)
    model: object = None                 # the Model when made in this process (not sent between processes)
    expected: Optional[Dict] = None      # the outputs it was compared with (the oracle's expected side)
    side: str = "actual"                 # whose bug a failure is: "actual" or "expected" (the other system)

    def __getstate__(self):
        return {**self.__dict__, "model": None}

    def payload(self, fmt: str) -> bytes:
        """The model for a backend taking ``fmt``: the ONNX bytes or the GraphIR payload."""
        if fmt == "onnx":
            return self.model_bytes
        from nnfuzz.materialize.portable import pack

        return pack(self.gir_text, self.weights)

    def add_twins(self) -> None:
        """Compute the float64 twins, rebuilding the torch model from the graph and seed if needed."""
        from nnfuzz.gir import GraphIR
        from nnfuzz.materialize.model import add_twins, build_model

        if self.model is None:
            self.model = build_model(GraphIR.loads(self.gir_text), self.seed, export=False,
                                     values=(self.weights, self.oracle.input))
        add_twins(self.model)
        self.oracle = self.model.oracle


def produce(cc: CampaignConfig, ops, rows, seed: int, time_left: float) -> Produced:
    """Generate the graph for ``seed`` and build its model (torch reference, ONNX, checks)."""
    from nnfuzz.generate.symbolic import GraphGenerator
    from nnfuzz.materialize.model import build_model

    p = Produced(seed=seed, rec={"seed": seed})
    t0 = time.perf_counter()
    policy = dataclasses.replace(cc.policy, seed=seed,
                                 graph_timeout_s=max(0.05, min(cc.policy.graph_timeout_s, time_left)))
    try:
        gir = GraphGenerator(policy, ops, rows).generate()
    except ConstraintError as e:
        p.error = ("no-graph", str(e))
        return p
    except NNFuzzError as e:  # an op definition or generator bug: shown, logged, counted
        p.error = ("nnfuzz-error", f"{type(e).__name__}: {e}")
        return p
    finally:
        p.gen_s = time.perf_counter() - t0
    p.rec.update(nodes=gir.n_nodes, ops=gir.op_names())
    t1 = time.perf_counter()
    try:
        model = build_model(gir, seed, opset=cc.opset, search=cc.search, export=cc.onnx,
                            export_timeout_s=max(0.05, min(cc.export_timeout_s, time_left)))
    except NNFuzzError as e:
        p.error = ("nnfuzz-error", f"{type(e).__name__}: {e}")
        return p
    finally:
        p.build_s = time.perf_counter() - t1
    p.gir_text, p.oracle = gir.dumps(), model.oracle
    p.model_bytes = model.onnx.SerializeToString() if model.onnx is not None else None
    p.timings, p.model, p.weights, p.search = model.timings, model, model.weights, model.search
    if model.search is not None:
        p.rec["search"] = {"ok": model.search["ok"], "ms": model.search["time_ms"]}
    return p


def _producer_main(cc: CampaignConfig, op_names, rows, first_seed: int, stride: int, q, stop, wall_deadline):
    """A producer process: models for seeds first_seed, first_seed + stride, ... until told to stop."""
    import queue as queue_mod
    import traceback

    from nnfuzz.fuzz.lifeline import serve_the_campaign
    from nnfuzz.generate.opset import select_ops

    serve_the_campaign()  # the campaign decides when to stop; dies with it
    ops = [c for c in select_ops(cc.policy, dialects=("tf",)) if c.name in set(op_names)]
    seed = first_seed
    while not stop.is_set() and time.time() < wall_deadline:
        try:
            p = produce(cc, ops, rows, seed, wall_deadline - time.time())
        except Exception:  # a bug in nnfuzz: sent to the campaign, which shows and counts it
            p = Produced(seed=seed, rec={"seed": seed}, error=("nnfuzz-error", traceback.format_exc()))
        while not stop.is_set():
            try:
                q.put(p, timeout=0.2)
                break
            except queue_mod.Full:
                continue
        seed += stride


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

    from nnfuzz.fuzz.oracles import OracleSpec, oracle_spec
    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.generate.opset import select_ops

    spec = OracleSpec("reference") if cc.backend_path else \
        oracle_spec(cc.oracle, cc.backend, cc.backend_options, cc.cmp_with)

    def sandbox_for(name, options, path=None):
        return Sandbox(name, options, test_timeout=cc.test_timeout, memory_limit_mb=cc.memory_limit_mb,
                       backend_path=path, stop=stop)

    with contextlib.ExitStack() as stack:
        sandbox = stack.enter_context(sandbox_for(cc.backend, cc.backend_options, cc.backend_path))
        expected = None
        if spec.expected is not None:
            expected = stack.enter_context(sandbox_for(spec.expected, spec.expected_options))
        sides = [sandbox] + ([expected] if expected else [])
        lowerings = {s.info.get("lowering", "torch") for s in sides}
        cc = dataclasses.replace(cc, onnx=any(s.format == "onnx" for s in sides))
        if cc.search is not None and any(s.info.get("int64_bits", 64) == 32 for s in sides):
            cc = dataclasses.replace(cc, search=dataclasses.replace(cc.search, int64_bits=32))
        ops = select_ops(cc.policy, usable=usable_with(lowerings), dialects=() if "torch" in lowerings else lowerings)
        campaign = Campaign(cc, ops, spec, stop)
        if cc.probe:
            from nnfuzz.fuzz.probe import probe_support

            campaign.ops = probe_support(sandbox, ops, cc, campaign)
        return campaign.run(sandbox, expected)


def usable_with(lowerings):
    """The op filter for systems built from ``lowerings``: every model has a torch lowering (the value
    search and the reference run on torch); TF systems also need a TF lowering. (Ops of the "tf" dialect
    are offered only when every side is built from TF lowerings: select_ops' ``dialects``.)"""
    from nnfuzz.materialize.torch.lowering import has_torch_lowering

    if "tf" in lowerings:
        from nnfuzz.materialize.tensorflow.lowering import has_tf_lowering

        return lambda c: has_torch_lowering(c) and has_tf_lowering(c)
    return has_torch_lowering
