"""`nnfuzz repro bugs/0042/`: replay a saved bug on its recorded system (or ``backend=...``).

Prints one line: the outcome and the system's message (its innermost part, the one the signature reads:
triage/rootcause.py's ``headline``), and for a bug that passes on a CPU whose vector ISA differs from
the one it was found on, how they differ (``other_cpu``); ``--json`` prints one JSON document instead (``reproduces``: true or
false, the verdict, both signatures). The replay itself is triage/repro.py; ``EXIT_CODES`` below.

``--script`` instead writes ``repro_<backend>.py`` into the bug folder: a standalone reproducer
(numpy, onnx and the system's own API) for an upstream report; ``--report`` writes that script and
``report.md``, the report in the system's own issue template with the script inline. An existing
script or report is kept unless ``--force`` is given.
"""
from __future__ import annotations

import sys
from pathlib import Path

EXIT_REPRODUCED, EXIT_NOT_REPRODUCED, EXIT_USAGE, EXIT_OTHER_FAILURE = 0, 1, 2, 3
EXIT_CODES = {EXIT_REPRODUCED: "the bug reproduces (the same symptom and dedup signature); --script: written",
              EXIT_NOT_REPRODUCED: "it does not (the model passes, or the system now says the op is unsupported)",
              EXIT_OTHER_FAILURE: "it fails differently (another symptom, or another signature: another crash)",
              EXIT_USAGE: "bad arguments, a malformed bug folder (a model.onnx that is not valid ONNX, a "
                          "meta.json of a newer schema, ...), or --script without --force over an existing script"}
USAGE = "usage: nnfuzz repro <bug folder> [backend=NAME] [--script | --report [--force]] [--json]"


def run(cfg, positional, overrides) -> int:
    from omegaconf import OmegaConf

    from nnfuzz.backends.registry import backend_class
    from nnfuzz.commands.reduce import timeout_scale
    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.output import result, say
    from nnfuzz.triage.bugstore import load_bug
    from nnfuzz.triage.cpu import isa_difference
    from nnfuzz.triage.repro import OTHER_FAILURE, REPRODUCED, replay
    from nnfuzz.triage.rootcause import headline

    flags = [a for a in positional if a.startswith("--")]
    paths = [a for a in positional if not a.startswith("--")]
    unknown = [f for f in flags if f not in ("--script", "--report", "--force")]
    if len(paths) != 1 or unknown:
        why = (f"unknown option {' '.join(unknown)}" if unknown else
               "which bug folder? name one, e.g. bugs/0000" if not paths else f"one bug folder, not {len(paths)}")
        print(f"nnfuzz repro: {why}\n{USAGE}", file=sys.stderr)
        return EXIT_USAGE
    bug = load_bug(Path(paths[0]))
    chosen = any(o.startswith("backend=") for o in overrides)
    backend = str(cfg.backend.name) if chosen else bug.meta.system
    if not backend and bug.meta.migration is not None:
        from nnfuzz.errors import ConfigError

        raise ConfigError(f"{bug.path} is a migrated test no system has run yet: name one, e.g. "
                          f"`nnfuzz repro {bug.path} backend=ort-cpu`")
    backend_class(backend)
    options = OmegaConf.to_container(cfg.backend.options) if chosen else given_options(cfg, overrides,
                                                                                       bug.meta.backend_options)
    tolerances = {k: tuple(v) for k, v in OmegaConf.to_container(cfg.fuzz.tolerances).items()}
    if "--script" in flags or "--report" in flags:
        from nnfuzz.triage.report_md import write_report
        from nnfuzz.triage.script import write_script

        out = bug.path / f"repro_{backend}.py"
        files = [out] + ([bug.path / "report.md"] if "--report" in flags else [])
        there = [str(f) for f in files if f.exists()]
        if there and "--force" not in flags:
            print(f"nnfuzz repro: {' and '.join(there)} exist{'s' if len(there) == 1 else ''} already (edited by "
                  "hand?); add --force to write over it", file=sys.stderr)
            return EXIT_USAGE
        script = write_script(bug, backend, tolerances)
        out.write_text(script)
        if "--report" in flags:
            files[1].write_text(write_report(bug, backend, script))
        say("\n".join(f"wrote {f}" for f in files))
        result({"bug": str(bug.path), "backend": backend, "written": [str(f) for f in files]})
        return 0
    scale = timeout_scale((bug.meta.oracle or {}).get("kind"))  # as the campaign that saved it allowed
    with Sandbox(backend, options or {}, test_timeout=float(cfg.fuzz.test_timeout) * scale,
                 memory_limit_mb=int(cfg.fuzz.memory_limit_mb)) as sandbox:
        sandbox.start()
        r = replay(bug, sandbox, tolerances, same_system=backend == bug.meta.system)
    code = {REPRODUCED: EXIT_REPRODUCED, OTHER_FAILURE: EXIT_OTHER_FAILURE}.get(r.outcome, EXIT_NOT_REPRODUCED)
    v = r.verdict
    message = headline(v.summary, v.detail, backend) if v.summary else ""
    other_cpu = isa_difference(bug.meta.found) if code == EXIT_NOT_REPRODUCED else ""
    message = "; ".join(m for m in (message, other_cpu) if m)
    result({"bug": str(bug.path), "backend": backend, "version": r.version, "verdict": v.label,
            "outcome": r.outcome, "stage": v.stage and v.stage.value, "recorded": bug.meta.symptom, "message": message,
            "signature": r.signature, "recorded_signature": r.recorded_signature,
            "reproduces": code == EXIT_REPRODUCED, "other_cpu": other_cpu},
           lambda: print(f"{bug.path}: {r.describe(bug.meta.symptom)} on {backend} {r.version}"
                         + (f": {message}" if message else "")))
    return code


def given_options(cfg, overrides, recorded) -> dict:
    """The options the bug was recorded with, each ``backend.options.KEY=VALUE`` given on the command line
    over its recorded value (replaying at ``opt_level=disable``, say): a given option is never ignored."""
    from omegaconf import OmegaConf

    given = OmegaConf.to_container(cfg.backend.options)
    keys = {o.lstrip("+~").split("=", 1)[0].split(".", 2)[2] for o in overrides
            if o.lstrip("+~").startswith("backend.options.")}
    return {**(recorded or {}), **{k: given[k] for k in keys if k in given}}
