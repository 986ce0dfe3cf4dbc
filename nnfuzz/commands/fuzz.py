"""`nnfuzz fuzz`: a campaign against one backend, bounded by ``time=``.

    nnfuzz fuzz backend=tvm-gpu time=8h
    nnfuzz fuzz backend=ort-cpu time=30s fuzz.out=bugs/ mgen.max_nodes=10
    nnfuzz fuzz backend=tvm-cpu oracle=optlevel         (default_build vs default pipeline)
    nnfuzz fuzz backend=tvm-cpu cmp.with=openvino-cpu   (two systems on the same model)
    nnfuzz fuzz backend=ort-cpu oracle=metamorphic      (the model vs an equivalent rewrite of it)
    nnfuzz fuzz backend=tvm-cpu mgen.invalid=0.2        (a fifth of the models invalid: must be rejected)
    nnfuzz fuzz backend=inductor-cpu fuzz.dynamic=1     (every model with symbolic dims it can have: one
                                                         compile, 3-4 shapes; docs/dynamic-shapes.md)

Bugs go to ``fuzz.out`` (default ``bugs/``) as numbered folders; a JSON-lines log of every test goes to
``<fuzz.out>/campaign.jsonl``. Each campaign draws a fresh seed unless ``mgen.seed=N`` is given; it is
printed at the start and recorded in campaign.jsonl and every meta.json.

``fuzz.workers=N`` sandboxes test at once (default auto: from the cores and memory; ``fuzz.executor=ray``
places them as Ray actors on a cluster, ``ray.address=auto``): docs/scaling.md. A campaign restarted into
the same ``fuzz.out`` goes on: bug numbers continue and the seeds it already tested are skipped
(``<fuzz.out>/campaign_state.json``).

A campaign ends with a few lines on stderr (fuzz/ending.py): the new bugs with their op, dtype, symptom
and folder, the known ones counted, and the commands to run next. ``--json`` prints the campaign's
summary as one JSON document on stdout (``nnfuzz fuzz time=20s --json | jq .tests``).

Ctrl-C, SIGTERM and SIGHUP stop a campaign the same clean way: producers and workers end, the bug store
is left whole, the summary prints (its ``stopped`` names the signal), exit code 130.
"""
from __future__ import annotations

from pathlib import Path

EXIT_CODES = {0: "the campaign ran to its bound (bugs found or not)",
              2: "a configuration error, or the backend cannot run here",
              1: "an error inside nnfuzz",
              130: "stopped by Ctrl-C, SIGTERM or SIGHUP (the store is whole, the summary printed)"}


def campaign_config(cfg):
    from omegaconf import OmegaConf

    from nnfuzz.config import export_config, gen_policy, parse_duration, search_config
    from nnfuzz.errors import ConfigError
    from nnfuzz.fuzz.campaign import CampaignConfig
    from nnfuzz.fuzz.sizing import parse_workers

    f = cfg.fuzz
    for key, lo in (("test_timeout", 0.01), ("memory_limit_mb", 16), ("max_tests", 0), ("producers", 0),
                    ("producer_models", 0), ("producer_growth", 0), ("reduce_s", 0)):
        v = f[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < lo:
            raise ConfigError(f"fuzz.{key}={v!r} must be a number >= {lo}")
    tolerances = OmegaConf.to_container(f.tolerances)
    for k, v in tolerances.items():
        if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) and x >= 0 for x in v)):
            raise ConfigError(f"fuzz.tolerances.{k}={v!r} must be [rtol, atol] with non-negative numbers")
    return CampaignConfig(
        backend=str(cfg.backend.name), backend_options=OmegaConf.to_container(cfg.backend.options) or {},
        policy=gen_policy(cfg), time_s=parse_duration(cfg.time), out=Path(str(f.out)),
        test_timeout=float(f.test_timeout), memory_limit_mb=int(f.memory_limit_mb), rerun=bool(f.rerun),
        max_tests=int(f.max_tests), log=str(f.log) if f.log else None, tolerances=tolerances,
        export=export_config(cfg), ui=str(cfg.ui),
        probe=bool(f.probe), debug=bool(cfg.debug), producers=int(f.producers),
        producer_models=int(f.producer_models), producer_growth=float(f.producer_growth), search=search_config(cfg),
        reduce=_flag(f.reduce, "fuzz.reduce"), reduce_s=float(f.reduce_s),
        oracle=str(cfg.oracle), cmp_with=str(cfg.cmp["with"]) if cfg.cmp["with"] else None,
        source=_source(f.get("source")), rewrites=_rewrites(cfg), workers=parse_workers(f.workers),
        executor=_executor(f.executor), ray_address=_ray_address(cfg.ray.address),
        dynamic=f.get("dynamic", "auto"), **_known_fields(f),  # checked by oracles/dynamic.py
    )


def _known_fields(f) -> dict:
    """``fuzz.keep_per_signature``, ``fuzz.known``, ``fuzz.known_file``, ``fuzz.known_kept`` and
    ``fuzz.steer_known`` (docs/known-bugs.md); the paths are read by ``settle``."""
    from omegaconf import OmegaConf

    from nnfuzz.errors import ConfigError

    keep = f.get("keep_per_signature", 3)
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
        raise ConfigError(f"fuzz.keep_per_signature={keep!r} must be an integer >= 0 (0: keep every bug's folder)")
    known = f.get("known") or []
    known = OmegaConf.to_container(known) if not isinstance(known, (str, list)) else known
    if isinstance(known, str):
        known = [known]
    if not isinstance(known, list) or not all(isinstance(k, str) and k for k in known):
        raise ConfigError(f"fuzz.known={known!r} must be a list of bug stores or bug folders, e.g. fuzz.known=[old_bugs]")
    known_file = f.get("known_file")
    if known_file is not None and not isinstance(known_file, str):
        raise ConfigError(f"fuzz.known_file={known_file!r} must be the path of a known-bugs YAML file")
    return {"keep_per_signature": keep, "known": tuple(Path(k) for k in known),
            "known_file": Path(known_file) if known_file else None,
            "known_kept": _flag(f.get("known_kept", True), "fuzz.known_kept"),
            "steer_known": _flag(f.get("steer_known", True), "fuzz.steer_known")}


def _rewrites(cfg) -> tuple:
    """``metamorphic.rewrites``: rewrite kinds (materialize/onnx/rewrite/), checked against the registry."""
    from nnfuzz.errors import ConfigError

    meta = cfg.get("metamorphic") or {}
    kinds = [str(k) for k in (meta.get("rewrites") or [])]
    if kinds:
        from nnfuzz.materialize.onnx.rewrite.drawing import load_all

        known = sorted(load_all())
        bad = [k for k in kinds if k not in known]
        if bad:
            raise ConfigError(f"metamorphic.rewrites has unknown kinds {bad}; valid: {known}")
    return tuple(kinds)


def _executor(value) -> str:
    from nnfuzz.errors import ConfigError
    from nnfuzz.fuzz.executors import EXECUTORS

    if value not in EXECUTORS:
        raise ConfigError(f"fuzz.executor={value!r} must be one of {list(EXECUTORS)}: local (sandbox processes "
                          "here), ray (Ray actors), inprocess (tests only: no sandbox, fuzz/inprocess.py)")
    return value


def _ray_address(value):
    """``ray.address``: auto, HOST:PORT (or a ray:// client address), or null (start a Ray here)."""
    from nnfuzz.errors import ConfigError

    if value in (None, ""):
        return None
    value = str(value)
    if value != "auto" and ":" not in value:
        raise ConfigError(f"ray.address={value!r} must be auto (the cluster this machine joined), HOST:PORT "
                          "(the head node's, e.g. 10.0.0.1:6379) or null (start a Ray on this machine)")
    return value


def _source(value):
    """``fuzz.source``: a folder written by ``nnfuzz migrate`` (it holds priority.json), or None."""
    from nnfuzz.errors import ConfigError

    if value in (None, ""):
        return None
    path = Path(str(value))
    if not (path / "priority.json").is_file():
        raise ConfigError(f"fuzz.source={value!r} must be a folder written by `nnfuzz migrate` (with priority.json); "
                          f"{'it has none' if path.is_dir() else 'it is not a folder'}")
    return path


def _flag(v, name: str) -> bool:
    from nnfuzz.errors import ConfigError

    if not isinstance(v, bool):
        raise ConfigError(f"{name}={v!r} must be true or false")
    return v


def run(cfg) -> int:
    from nnfuzz.fuzz.campaign import run_campaign, settle
    from nnfuzz.fuzz.ending import ending
    from nnfuzz.fuzz.stopping import EXIT_CODE
    from nnfuzz.output import result, say
    from nnfuzz.ui import use_rich

    # the store's tested seeds (a resumed campaign goes on from them), the seed (mgen.seed=null: drawn
    # here) and the oracles (unknown names, impossible oracles: ConfigError)
    cc, oracles = settle(campaign_config(cfg))
    use_rich(cc.ui)  # validates ui= before anything slow
    counters = run_campaign(cc, oracles)
    doc = {
        "backend": cc.backend, "oracle": cc.cmp_with and f"cmp.with={cc.cmp_with}" or cc.oracle,
        "seed": cc.policy.seed, "stopped": counters.stopped, "tests": counters.tests,
        "tests_per_s": round(counters.rate(), 2),
        "tests_per_compile": round(counters.runs_per_compile(), 2),
        "dynamic": {"tests": counters.dynamic, "shapes_run": counters.dynamic_runs,
                    "compiles": counters.dynamic_compiles},
        "verdicts": dict(counters.verdicts), "formats": dict(counters.formats), "bugs_saved": counters.bugs_saved,
        "new_unique": counters.new_unique, "unique_in_store": counters.unique_bugs, "flaky": counters.flaky,
        "bugs": {"new": {"root_causes": counters.new_root_causes, "hits": counters.new_hits,
                         "folders": counters.new_folders},
                 "known": {"root_causes": counters.known_root_causes, "hits": counters.known_hits,
                           "folders": counters.known_folders},
                 "counted": counters.counted, "replaced": counters.replaced},
        "slow": counters.slow,
        "noise": counters.noise,      # disagreements with every node within its accuracy budget
        "checked": counters.checked,  # passes checked node by node (precision faults at their source)
        "reduced": counters.reduced, "lost": counters.lost, "workers": counters.workers,
        "producer_restarts": counters.producer_restarts, "producer_recycles": counters.producer_recycles,
        "quantized": counters.quantized, "no_rewrite": counters.no_rewrite, "no_gradient": counters.no_gradient,
        "invalid": dict(counters.invalid), "not_dynamic": counters.not_dynamic,
        "no_graph": counters.gen_failed, "undefined_values": counters.undefined_values, "nnfuzz_errors": counters.nnfuzz_errors, "out": str(cc.out),
        "new_bugs": counters.new_bugs,  # this campaign's new root causes: folder, op, dtype, symptom, message
    }
    say(ending(doc))
    result(doc)
    return EXIT_CODE if counters.stopped else 0
