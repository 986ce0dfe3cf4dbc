"""`nnfuzz repro bugs/0042/`: replay a saved bug on its recorded system (or ``backend=...``).

Exit codes: 0 the bug reproduces with the same symptom; 1 it does not (the model passes, or the
system now says the op is unsupported); 3 it fails with a different symptom; 2 bad arguments or a
malformed bug folder. ``--script`` instead writes ``repro_<backend>.py`` into the bug folder: a
standalone reproducer (numpy, onnx and the system's own API) for an upstream report.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

EXIT_REPRODUCED, EXIT_NOT_REPRODUCED, EXIT_USAGE, EXIT_OTHER_SYMPTOM = 0, 1, 2, 3


def run(cfg, positional, overrides) -> int:
    from omegaconf import OmegaConf

    from nnfuzz.backends.registry import backend_class
    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.verdict import judge
    from nnfuzz.triage.bugstore import load_bug

    flags = [a for a in positional if a.startswith("--")]
    paths = [a for a in positional if not a.startswith("--")]
    unknown = [f for f in flags if f != "--script"]
    if len(paths) != 1 or unknown:
        print(f"usage: nnfuzz repro <bug folder> [backend=NAME] [--script]; got {positional}", file=sys.stderr)
        return EXIT_USAGE
    bug = load_bug(Path(paths[0]))
    chosen = any(o.startswith("backend=") for o in overrides)
    backend = str(cfg.backend.name) if chosen else str(bug.meta["system"])
    backend_class(backend)
    options = OmegaConf.to_container(cfg.backend.options) if chosen else bug.meta.get("backend_options", {})
    tolerances = {k: tuple(v) for k, v in OmegaConf.to_container(cfg.fuzz.tolerances).items()}
    if "--script" in flags:
        from nnfuzz.triage.script import write_script

        out = bug.path / f"repro_{backend}.py"
        out.write_text(write_script(bug, backend, tolerances))
        print(f"wrote {out}")
        return 0
    with Sandbox(backend, options or {}, test_timeout=float(cfg.fuzz.test_timeout),
                 memory_limit_mb=int(cfg.fuzz.memory_limit_mb)) as sandbox:
        info = sandbox.start()
        from nnfuzz.triage.bugstore import bug_payload

        res = sandbox.run(bug_payload(bug, sandbox.format, int(bug.meta.get("opset", 17))), bug.oracle["input"])
    verdict = judge(res, bug.oracle["output"], info.get("system") or backend.split("-")[0], tolerances,
                    bug.oracle.get("output_f64"), bug.oracle.get("output_f64_jitter"))
    recorded = bug.meta["symptom"]
    if verdict.is_bug and verdict.label == recorded:
        code, word = EXIT_REPRODUCED, "reproduces"
    elif verdict.is_bug:
        code, word = EXIT_OTHER_SYMPTOM, f"fails differently ({verdict.label}, recorded {recorded})"
    else:
        code, word = EXIT_NOT_REPRODUCED, f"does not reproduce ({verdict.label})"
    print(f"{bug.path}: {word} on {backend} {info.get('version')}: {verdict.summary}")
    print(json.dumps({"bug": str(bug.path), "backend": backend, "version": info.get("version"),
                      "verdict": verdict.label, "stage": verdict.stage and verdict.stage.value,
                      "recorded": recorded, "reproduced": code == EXIT_REPRODUCED}))
    return code
