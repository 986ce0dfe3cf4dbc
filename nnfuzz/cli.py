"""`nnfuzz <command> key=value ...`"""
from __future__ import annotations

import importlib
import os
import sys

from nnfuzz.errors import ConfigError, ControlSignal, NNFuzzError

COMMANDS = {
    "fuzz": "run a campaign: nnfuzz fuzz backend=ort-cpu time=10m (bugs go to fuzz.out=bugs/)",
    "repro": "replay a bug: nnfuzz repro bugs/0042/ [backend=...] [--script | --report]",
    "reduce": "shrink a bug's graph while its signature holds: nnfuzz reduce bugs/0042/ [reduce_s=120]",
    "dedup": "group bugs by root cause, write bugs/index.json and bugs/README.md: nnfuzz dedup bugs/",
    "generate": "write random valid models: nnfuzz generate n=100 mgen.max_nodes=10 out=models/ mgen.seed=1",
    "backends": "list the known systems under test, whether each can run here and why not: nnfuzz backends",
    "migrate": "library operator tests as models, prioritized: nnfuzz migrate source=onnx-node out=migrated/",
    "ops": "list registered operators with families, dtypes and ranks: nnfuzz ops [mgen.include_modules=[pkg.mod]]",
    "merge": "merge bug stores of campaigns run apart (renumbered, re-deduplicated): nnfuzz merge A B -o C",
    "report": "one static HTML page of a bug store (campaign plots, unique bugs, graphs): nnfuzz report bugs/ [--no-stats] [-o FILE; default bugs/report.html]",
    "stats": "diversity metrics and coverage of a corpus of models, or two side by side: nnfuzz stats DIR [DIR2] [--json]",
}

TAKES_POSITIONAL = {"repro", "dedup", "reduce", "stats", "merge", "report"}

# The configuration each command reads: top-level keys and groups, listed by `nnfuzz <command> --help`.
COMMAND_KEYS = {
    "fuzz": ("time", "backend", "oracle", "metamorphic", "cmp", "fuzz", "ray", "mgen", "search", "export", "ui",
             "debug"),
    "repro": ("backend", "fuzz.test_timeout", "fuzz.memory_limit_mb", "fuzz.tolerances"),
    "reduce": ("reduce_s", "fuzz.test_timeout", "fuzz.memory_limit_mb", "fuzz.tolerances"),
    "dedup": (),
    "generate": ("n", "out", "mgen", "search", "export", "ui"),
    "backends": ("fuzz.memory_limit_mb", "debug"),
    "ops": ("mgen", "debug"),
    "stats": (),
    "report": (),
    "merge": (),
    "migrate": ("source", "out", "migrate", "fuzz.tolerances", "ui"),
}

USAGE = "usage: nnfuzz <command> [key=value ...] [--json]\n\ncommands:\n" + "\n".join(
    f"  {name:10s} {doc}" for name, doc in COMMANDS.items()
) + ("\n\n`nnfuzz <command> --help` lists that command's keys with their defaults (conf/*.yaml documents them)"
     " and its exit codes.\n--json (any command, anywhere on the line): stdout carries exactly one JSON document,"
     " the result; human text and logs go to stderr.")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    cmd, args = argv[0], argv[1:]
    if cmd not in COMMANDS:
        print(f"nnfuzz: unknown command {cmd!r}; valid commands: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    if any(a in ("-h", "--help") for a in args):
        return _command_help(cmd, [a for a in args if "=" in a and not a.startswith("-")])
    from nnfuzz.native_memory import bound_native_caches
    from nnfuzz.output import output

    bound_native_caches()  # every command's torch runs (a campaign, a reduction, a replay's localization)
    as_json = "--json" in args
    try:
        with output(as_json):
            return _run(cmd, [a for a in args if a != "--json"])
    except BrokenPipeError:  # `nnfuzz ops | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _run(cmd: str, args) -> int:
    positional = [a for a in args if "=" not in a or a.startswith("--")]
    overrides = [a for a in args if a not in positional]
    if positional and cmd not in TAKES_POSITIONAL:
        print(f"nnfuzz {cmd}: unexpected argument{'s' if len(positional) > 1 else ''} {' '.join(positional)}; "
              f"settings are key=value, e.g. `{COMMANDS[cmd].split(': ', 1)[-1]}`", file=sys.stderr)
        return 2
    try:
        from nnfuzz.config import load_config

        cfg = load_config(overrides)
        module = importlib.import_module(f"nnfuzz.commands.{cmd}")
        if cmd in TAKES_POSITIONAL:
            return module.run(cfg, positional, overrides)
        return module.run(cfg)
    except ConfigError as e:
        print(f"nnfuzz: configuration error: {e}", file=sys.stderr)
        return 2
    except NNFuzzError as e:
        from nnfuzz.backends.base import BackendUnavailable
        from nnfuzz.triage.folder import BugFolderError

        print(f"nnfuzz: {type(e).__name__}: {e}", file=sys.stderr)
        return 2 if isinstance(e, (BackendUnavailable, BugFolderError)) else 1
    except ControlSignal as e:  # a retry signal no caller handled: a bug in nnfuzz, not the user's input
        print(f"nnfuzz: InternalError: unhandled {type(e).__name__}: {e}", file=sys.stderr)
        return 1


def _command_help(cmd: str, overrides) -> int:
    print(f"nnfuzz {cmd}: {COMMANDS[cmd]}")
    codes = importlib.import_module(f"nnfuzz.commands.{cmd}").EXIT_CODES
    print("\nexit codes:\n" + "\n".join(f"  {code:>3}  {what}" for code, what in sorted(codes.items())))
    print("\n--json: stdout carries exactly one JSON document (the result); human text and logs go to stderr")
    if not COMMAND_KEYS[cmd]:
        print("\nkeys: none")
        return 0
    from nnfuzz.config import keys_help

    try:
        text = keys_help(COMMAND_KEYS[cmd], overrides)
    except ConfigError as e:
        print(f"nnfuzz: configuration error: {e}", file=sys.stderr)
        return 2
    print(f"\nkeys (key=default; override any on the command line, e.g. {COMMAND_KEYS[cmd][0]}=...):\n{text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
