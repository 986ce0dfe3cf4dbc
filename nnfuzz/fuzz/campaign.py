"""The campaign: a list of phases per test (generate, materialize, test, judge, re-run, save), each
with its own counters, under one hard time bound."""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Dict, List, Optional

import nnfuzz
from nnfuzz.errors import ConstraintError, NNFuzzError
from nnfuzz.fuzz.status import Counters, JsonLog, Status
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.oracle import Symptom, Verdict, judge
from nnfuzz.triage.bugstore import BugStore


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


class Campaign:
    def __init__(self, cfg: CampaignConfig, ops: List[type]):
        self.cfg = cfg
        self.ops = ops
        self.deadline = time.monotonic() + cfg.time_s
        self.counters = Counters()
        self.store = BugStore(cfg.out)
        self.log = JsonLog(cfg.out / cfg.log if cfg.log else None)
        self.info: Dict = {}
        self.rows: Dict[str, set] = {}   # op name -> supported dtype rows (from probing)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def run(self, sandbox) -> Counters:
        """Run tests until the time bound (or max_tests). ``sandbox`` is started by the caller."""
        self.info = sandbox.info
        title = f"nnfuzz fuzz {self.cfg.backend} ({self.info.get('version', '?')})"
        seed = self.cfg.policy.seed
        try:
            with Status(self.counters, self.deadline, self.cfg.ui, title) as status:
                self.status = status
                while self.left() > 0.05 and not (self.cfg.max_tests and self.counters.tests >= self.cfg.max_tests):
                    self.test_one(sandbox, seed)
                    seed += 1
                    status.refresh()
        finally:
            self.log.close()
        return self.counters

    # ---- one test -----------------------------------------------------------------------------
    def test_one(self, sandbox, seed: int) -> None:
        from nnfuzz.generate.symbolic import GraphGenerator
        from nnfuzz.materialize.model import build_model

        c, rec = self.counters, {"seed": seed}
        t0 = time.perf_counter()
        policy = dataclasses.replace(self.cfg.policy, seed=seed,
                                     graph_timeout_s=max(0.05, min(self.cfg.policy.graph_timeout_s, self.left())))
        try:
            gir = GraphGenerator(policy, self.ops, self.rows).generate()
        except ConstraintError as e:
            c.gen_failed += 1
            self.log.write({**rec, "verdict": "no-graph", "error": str(e)})
            return
        except NNFuzzError as e:  # an op definition or generator bug: shown, logged, counted; campaign goes on
            self._nnfuzz_error(rec, seed, e)
            return
        finally:
            c.seconds["generate"] += time.perf_counter() - t0
        rec.update(nodes=gir.n_nodes, ops=gir.op_names())
        t1 = time.perf_counter()
        try:
            model = build_model(gir, seed, opset=self.cfg.opset,
                                export_timeout_s=max(0.05, min(self.cfg.export_timeout_s, self.left())))
        except NNFuzzError as e:
            self._nnfuzz_error(rec, seed, e)
            return
        finally:
            c.seconds["export"] += time.perf_counter() - t1
        if self.left() <= 0:
            return
        model_bytes = model.onnx.SerializeToString()
        verdict, res = self._test(sandbox, model_bytes, model)
        if verdict is None:
            self.log.write({**rec, "verdict": "cut", "note": "stopped by the campaign's time bound"})
            return
        c.tests += 1
        c.verdicts[verdict.label] += 1
        rec.update(verdict=verdict.label, stage=verdict.stage and verdict.stage.value, seconds={
            "generate": round(t1 - t0, 4), "export": round(model.timings.get("export_s", 0.0), 4),
            **{k: round(v, 4) for k, v in res.seconds.items()}})
        if verdict.is_bug:
            rec["bug"] = self._confirm_and_save(sandbox, model_bytes, model, gir, verdict, res, seed, rec)
        self.log.write(rec)

    def _nnfuzz_error(self, rec, seed, e: Exception) -> None:
        c = self.counters
        c.nnfuzz_errors += 1
        c.last_error = f"seed {seed}: {type(e).__name__}: {e}"
        self.status.note(f"nnfuzz error (not a bug of {self.cfg.backend}) at seed {seed}: {type(e).__name__}: {e}")
        self.log.write({**rec, "verdict": "nnfuzz-error", "error": f"{type(e).__name__}: {e}"})

    def _test(self, sandbox, model_bytes, model):
        from nnfuzz.materialize.model import add_twins

        oracle = model.oracle
        timeout = max(0.05, min(self.cfg.test_timeout, self.left()))
        res = sandbox.run(model_bytes, oracle.input, timeout=timeout)
        if res.status == "timeout" and timeout < self.cfg.test_timeout:
            return None, res  # cut short by the campaign's own time bound: not tested, not a timeout
        for k, v in res.seconds.items():
            self.counters.seconds[k] += v
        tol = {k: tuple(v) for k, v in self.cfg.tolerances.items()} or None
        system = self.info.get("system") or self.cfg.backend.split("-")[0]

        def verdict_now():
            return judge(res, oracle.output, system, **({"tolerances": tol} if tol else {}),
                         twin=oracle.output_f64, jitter=oracle.output_f64_jitter)

        verdict = verdict_now()
        if verdict.symptom is Symptom.inconsistency and oracle.output_f64 is None:
            t0 = time.perf_counter()
            add_twins(model)  # the float64 twins decide whether this disagreement is only noise
            self.counters.seconds["export"] += time.perf_counter() - t0
            verdict = verdict_now()
        return verdict, res

    def _confirm_and_save(self, sandbox, model_bytes, model, gir, verdict: Verdict, res, seed, rec) -> str:
        c = self.counters
        flaky = False
        if self.cfg.rerun and self.left() > 0:
            again, _ = self._test(sandbox, model_bytes, model)
            flaky = again is not None and again.label != verdict.label
        meta = {
            "system": self.cfg.backend, "version": self.info.get("version"), "symptom": verdict.symptom.value,
            "version_id": self.info.get("version_id"), "stage": verdict.stage.value, "seed": seed,
            "flaky": flaky, "summary": verdict.summary, "errors": verdict.errors,
            "nodes": gir.n_nodes, "ops": gir.op_names(), "nnfuzz": nnfuzz.__version__,
            "backend_options": self.cfg.backend_options, "policy": dataclasses.asdict(self.cfg.policy),
            "opset": self.cfg.opset, "timings": rec.get("seconds", {}), "signal": res.signal,
        }
        path = self.store.save(model_bytes=model_bytes, gir_text=gir.dumps(), oracle=model.oracle.to_dict(),
                               meta=meta, err_log=f"{verdict.summary}\n\n{verdict.detail}\n")
        c.bugs_saved += 1
        c.flaky += flaky
        c.last_bug = f"{path.name}: {verdict.label} at {verdict.stage.value}: {verdict.summary[:100]}"
        self.status.note(f"bug saved: {path}  {verdict.label}@{verdict.stage.value}{' (flaky)' if flaky else ''}: "
                         f"{verdict.summary[:160]}")
        return str(path)


def run_campaign(cc: CampaignConfig) -> Counters:
    """Start the sandbox (a backend that cannot run fails here, before any test), probe op support
    unless disabled, and run the campaign until its time bound."""
    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.materialize.torch.lowering import has_torch_lowering

    ops = select_ops(cc.policy, usable=has_torch_lowering)
    with Sandbox(cc.backend, cc.backend_options, test_timeout=cc.test_timeout,
                 memory_limit_mb=cc.memory_limit_mb, backend_path=cc.backend_path) as sandbox:
        campaign = Campaign(cc, ops)
        sandbox.start()
        if cc.probe:
            from nnfuzz.fuzz.probe import probe_support

            campaign.ops = probe_support(sandbox, ops, cc, campaign)
        return campaign.run(sandbox)
