"""A campaign: the user's config (``CampaignConfig``) and its start-up. ``run_campaign`` settles the
config (the store's tested seeds, a drawn seed, the oracles: a configuration that cannot work fails
here), starts the sandboxes (a backend that cannot run fails here, before any test), probes what the
systems support, decides the campaign's plan (fuzz/plan.py) and runs it (fuzz/loop.py) until its time
bound or a stop signal (SIGINT, SIGTERM, SIGHUP: ``Counters.stopped`` names it; fuzz/stopping.py)."""
from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Optional, Tuple

from nnfuzz.errors import ConfigError
from nnfuzz.fuzz.context import Clock
from nnfuzz.fuzz.plan import CampaignPlan
from nnfuzz.fuzz.status import Counters
from nnfuzz.fuzz.stopping import Stopped, StopRequest
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.materialize.onnx.spec import ExportSpec
from nnfuzz.output import plural, say
from nnfuzz.triage.known import known_bugs_of, variant_of

if TYPE_CHECKING:
    from nnfuzz.oracles.base import Oracle


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
    backend_path: Optional[str] = None   # "module:Class" of the system under test, named without registering it
    producers: int = 0                   # processes generating models in parallel (0: in this process)
    producer_models: int = 0             # models per producer before fresh producers replace them (0: never)
    producer_growth: float = 0.0         # growth over a producer's early size at which fresh ones replace them (0: never)
    search: Optional[object] = dataclasses.field(default_factory=_default_search)  # SearchConfig | None
    reduce: bool = True                  # shrink each bug with a new signature in the background after saving it
    reduce_s: float = 30.0               # time budget per reduction
    oracle: str = "reference"            # the test oracle by name (nnfuzz/oracles/: reference, optlevel, ...)
    rewrites: Tuple[str, ...] = ()       # oracle=metamorphic: the rewrite kinds to draw from (empty: probed)
    cmp_with: Optional[str] = None       # a second system to compare with (oracle "cmp")
    source: Optional[Path] = None        # a folder of migrated tests (nnfuzz migrate), tested in priority order
    workers: object = 1                  # sandboxes testing at once: N or "auto" (fuzz/sizing.py, fuzz/pool.py)
    executor: str = "local"              # local | ray | inprocess (the test tier): fuzz/executors.py
    ray_address: Optional[str] = "auto"  # ray.init's address: auto | HOST:PORT | None (start a Ray here)
    tested_seeds: Optional[tuple] = None  # seed ranges the store already tested (fuzz/resume.py; None: not read yet)
    keep_per_signature: int = 3          # folders kept per signature (known or not); the rest counted (0: keep all)
    known: Tuple[Path, ...] = ()         # bug stores (or folders) whose bugs are known, beside the kept ones
    known_file: Optional[Path] = None    # a known-bugs file (YAML) beside bugs/kept/known.yaml
    known_kept: bool = True              # the repository's kept bugs (bugs/kept/ and its known.yaml) are known
    steer_known: bool = True             # generation avoids the known bugs' triggers (op x dtype, spelling)
    known_bugs: Optional[object] = None  # the loaded triage.known.KnownBugs (settle; None: not loaded yet)
    dynamic: object = "auto"             # fuzz.dynamic: "auto" or the share of dynamic tests (oracles/dynamic.py)


def settle(cc: CampaignConfig) -> Tuple[CampaignConfig, Tuple["Oracle", ...]]:
    """``cc`` with the store's tested seeds (fuzz/resume.py) and a concrete seed (``mgen.seed=null``:
    drawn here), and the campaign's oracles (nnfuzz/oracles/; unknown names, impossible oracles: a
    ConfigError). Done once per campaign."""
    from nnfuzz.fuzz.resume import with_tested_seeds
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.oracles.base import campaign_oracles

    select_ops(cc.policy, dialects=("tf",))  # unknown op names: a ConfigError here, before any process starts
    cc = with_tested_seeds(cc)
    cc = dataclasses.replace(cc, policy=cc.policy.with_concrete_seed(), known_bugs=known_bugs_of(cc))
    return cc, campaign_oracles(cc)


def run_campaign(cc: CampaignConfig, oracles: Optional[Tuple["Oracle", ...]] = None) -> Counters:
    """Run a campaign; ``cc`` is settled first unless ``oracles`` says it was (``settle``). The store is
    locked for it (fuzz/store_lock.py): a second campaign on ``fuzz.out`` is refused."""
    from nnfuzz.fuzz.store_lock import store_lock
    from nnfuzz.native_memory import bound_native_caches, one_heap

    bound_native_caches()  # before anything here runs torch
    one_heap()  # before the lanes' threads start
    stop = StopRequest()
    with store_lock(cc.out), stop.on_signals():
        if oracles is None:
            cc, oracles = settle(cc)
        try:
            counters = _start_and_run(cc, oracles, stop)
        except Stopped:  # while the sandbox started or probing ran: nothing was tested
            counters = Counters()
        counters.stopped = stop.name
    return counters


def _start_and_run(cc: CampaignConfig, oracles: Tuple["Oracle", ...], stop: StopRequest) -> Counters:
    from nnfuzz.fuzz.executors import make_executor, make_producers
    from nnfuzz.fuzz.loop import Campaign
    from nnfuzz.fuzz.pool import Lane, close_lanes, more_lanes
    from nnfuzz.fuzz.sizing import thread_env

    primary = oracles[-1]  # a lane's expected-side sandbox runs the primary oracle's expected system
    with contextlib.ExitStack() as stack:
        executor = make_executor(cc, stack)
        workers = executor.workers(cc)
        env = thread_env(workers)

        def lane(k: int) -> Lane:
            sandbox = executor.sandbox(cc, cc.backend, cc.backend_options, cc.backend_path, stop, env)
            expected_sandbox = None
            if primary.expected_system is not None:
                expected_sandbox = executor.sandbox(cc, primary.expected_system, primary.expected_options,
                                                    None, stop, env, expected=True)
            return Lane(f"w{k}", sandbox, expected_sandbox)

        migrated = cc.source is not None  # migrated tests: no generation, so no producers and no op probing
        n_producers = 0 if migrated else cc.producers
        producers = None
        if n_producers > 0:  # first: their imports and warm-up overlap the sandbox's start and the probe
            producers = make_producers(cc, executor)
            stack.callback(producers.close)
        first = lane(0)
        lanes = [first]
        stack.callback(lambda: close_lanes(lanes))
        for sb in first.sandboxes():
            sb.start()
        lanes += more_lanes(lane, workers)  # starting while lane 0 probes
        sides = first.sandboxes()
        if migrated and any(s.format != "onnx" for s in sides):
            raise ConfigError(f"fuzz.source={cc.source} holds ONNX models, but {[s.backend for s in sides if s.format != 'onnx']} "
                              "take nnfuzz graphs, which migrated tests do not have; use an ONNX backend (ort-cpu, "
                              "tvm-cpu, openvino-cpu, ...)")
        for oracle in oracles:
            oracle.check(first.sandbox, cc)
        ops = _lowered_ops(cc, sides, oracles)  # (imports the lowerings: seconds, before the campaign's clock starts)
        scale = max(o.timeout_scale for o in oracles)  # oracle=grad: a forward and a backward graph to compile
        campaign = Campaign(cc, clock=Clock(cc.time_s, cc.test_timeout * scale), stop=stop)
        campaign.producers = producers
        plan = _plan(cc, oracles, first, sides, ops, campaign.clock, probe=cc.probe and not migrated)
        return campaign.run(lanes, dataclasses.replace(plan, workers=workers, producers=n_producers))


def _lowered_ops(cc: CampaignConfig, sides, oracles=()) -> list:
    """The policy's ops that every side's lowering (and the ONNX path, when a side takes ONNX) can build
    (with the ops of the dialects the oracles test, e.g. oracle=grad's training-mode ops)."""
    from nnfuzz.generate.opset import select_ops, usable_with

    lowerings = {s.backend_info.lowering for s in sides}
    via = cc.export.via if any(s.format == "onnx" for s in sides) else None
    dialects = tuple(() if "torch" in lowerings else lowerings) + tuple(d for o in oracles for d in o.dialects)
    return select_ops(cc.policy, usable=usable_with(lowerings, via), dialects=dialects)


def _plan(cc: CampaignConfig, oracles, first, sides, ops, clock: Clock, probe: bool) -> CampaignPlan:
    """What the systems decide: of the lowered ``ops``, those they support (probed: the supported rows),
    whether models are written as ONNX and at which opsets, the search's integer width, and the oracles
    as started."""
    onnx = any(s.format == "onnx" for s in sides)
    search = cc.search
    if search is not None and any(s.backend_info.int64_bits == 32 for s in sides):
        search = dataclasses.replace(search, int64_bits=32)
    if search is not None and any(o.kinks for o in oracles):  # gradients compared: values away from kinks
        search = dataclasses.replace(search, kinks=True)
    export, rows = cc.export, {}
    if probe:
        from nnfuzz.fuzz.probe import probe_opsets, probe_support

        if onnx and cc.export.opset is None:
            export = probe_opsets([s for s in sides if s.format == "onnx"], cc, clock)
        ops, rows = probe_support(first.sandbox, ops, cc, export, clock)
        oracles = tuple(o.start(first.sandbox, cc) for o in oracles)
    if cc.steer_known:  # the known bugs' triggers are not generated (generate/steer.py)
        from nnfuzz.generate.steer import steer

        known = known_bugs_of(cc)
        triggers = known.triggers(cc.backend, variant_of(cc.backend, cc.backend_options)) + \
            (known.triggers(cc.cmp_with, variant_of(cc.cmp_with, {})) if cc.cmp_with else [])
        ops, rows, export, notes = steer(triggers, ops, rows, export, cc.policy)
        if notes:
            say(f"known bugs: generation steers away from {plural(len(notes), 'trigger')}: {', '.join(notes[:6])}"
                + (" ..." if len(notes) > 6 else ""))
    quantized, qdq_at, blocked = cc.policy.quantized, None, True
    if quantized is None:  # the systems' default: every side must take QDQ graphs
        quantized = min(s.backend_info.quantized for s in sides)
    if quantized and onnx and probe:  # the opsets at which QDQ graphs run (fuzz/qdq_opsets.py)
        from nnfuzz.fuzz.qdq_opsets import qdq_blocked, qdq_opset

        qdq_at = qdq_opset([s for s in sides if s.format == "onnx"], export, clock)
        quantized = quantized if qdq_at is not None else 0.0
        blocked = qdq_at is not None and qdq_blocked([s for s in sides if s.format == "onnx"], qdq_at, clock)
    return CampaignPlan(tuple(ops), rows, export, search, onnx, tuple(oracles), probed=probe, quantized=quantized,
                        qdq_opset=qdq_at, qdq_blocked=blocked)
