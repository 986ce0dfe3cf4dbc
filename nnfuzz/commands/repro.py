"""`nnfuzz repro bugs/0042/`: replay a saved bug on its recorded system (or ``backend=...``).

Exit codes: 0 the bug reproduces (the same symptom and dedup signature); 1 it does not (the model
passes, or the system now says the op is unsupported); 3 it fails differently (another symptom, or
another signature: another crash); 2 bad arguments or a malformed bug folder (a model.onnx that is not
valid ONNX, a meta.json of a newer schema, ...). The replay itself is triage/repro.py.

``--script`` instead writes ``repro_<backend>.py`` into the bug folder: a standalone reproducer
(numpy, onnx and the system's own API) for an upstream report; ``--report`` writes that script and
``report.md``, the report in the system's own issue template with the script inline.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

EXIT_REPRODUCED, EXIT_NOT_REPRODUCED, EXIT_USAGE, EXIT_OTHER_FAILURE = 0, 1, 2, 3


def run(cfg, positional, overrides) -> int:
    from omegaconf import OmegaConf

    from nnfuzz.backends.registry import backend_class
    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.triage.bugstore import load_bug
    from nnfuzz.triage.repro import OTHER_FAILURE, REPRODUCED, replay

    flags = [a for a in positional if a.startswith("--")]
    paths = [a for a in positional if not a.startswith("--")]
    unknown = [f for f in flags if f not in ("--script", "--report")]
    if len(paths) != 1 or unknown:
        print(f"usage: nnfuzz repro <bug folder> [backend=NAME] [--script | --report]; got {positional}",
              file=sys.stderr)
        return EXIT_USAGE
    bug = load_bug(Path(paths[0]))
    chosen = any(o.startswith("backend=") for o in overrides)
    backend = str(cfg.backend.name) if chosen else bug.meta.system
    if not backend and bug.meta.migration is not None:
        from nnfuzz.errors import ConfigError

        raise ConfigError(f"{bug.path} is a migrated test no system has run yet: name one, e.g. "
                          f"`nnfuzz repro {bug.path} backend=ort-cpu`")
    backend_class(backend)
    options = OmegaConf.to_container(cfg.backend.options) if chosen else bug.meta.backend_options
    tolerances = {k: tuple(v) for k, v in OmegaConf.to_container(cfg.fuzz.tolerances).items()}
    if "--script" in flags or "--report" in flags:
        from nnfuzz.triage.report_md import write_report
        from nnfuzz.triage.script import write_script

        script = write_script(bug, backend, tolerances)
        out = bug.path / f"repro_{backend}.py"
        out.write_text(script)
        print(f"wrote {out}")
        if "--report" in flags:
            (bug.path / "report.md").write_text(write_report(bug, backend, script))
            print(f"wrote {bug.path / 'report.md'}")
        return 0
    with Sandbox(backend, options or {}, test_timeout=float(cfg.fuzz.test_timeout),
                 memory_limit_mb=int(cfg.fuzz.memory_limit_mb)) as sandbox:
        sandbox.start()
        r = replay(bug, sandbox, tolerances, same_system=backend == bug.meta.system)
    code = {REPRODUCED: EXIT_REPRODUCED, OTHER_FAILURE: EXIT_OTHER_FAILURE}.get(r.outcome, EXIT_NOT_REPRODUCED)
    v = r.verdict
    print(f"{bug.path}: {r.describe(bug.meta.symptom)} on {backend} {r.version}: {v.summary}")
    print(json.dumps({"bug": str(bug.path), "backend": backend, "version": r.version, "verdict": v.label,
                      "stage": v.stage and v.stage.value, "recorded": bug.meta.symptom, "signature": r.signature,
                      "recorded_signature": r.recorded_signature, "reproduced": code == EXIT_REPRODUCED}))
    return code
