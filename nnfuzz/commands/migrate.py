"""`nnfuzz migrate source=onnx-node|torch-opinfo out=migrated/`: library operator tests as single-operator
models, one bug-style folder each under ``out/<source>/``, then every folder under ``out`` ordered by
OPERA's prioritization into ``out/priority.json`` (docs/migration.md). A table of what was migrated goes
to stderr; stdout gets one line, or with ``--json`` one JSON document."""
from __future__ import annotations

import contextlib
import json
import sys
import traceback
from pathlib import Path

from nnfuzz.errors import ConfigError

EXIT_CODES = {0: "migrated", 1: "some tests failed inside nnfuzz (a bug in nnfuzz; messages above)",
              2: "a configuration error (an unknown source, an out= that holds migrated tests already)"}


def run(cfg) -> int:
    from omegaconf import OmegaConf

    from nnfuzz.migrate.record import Tally
    from nnfuzz.output import result
    from nnfuzz.triage.meta import MIGRATION_SOURCES as SOURCES
    from nnfuzz.ui import Progress

    source, m = cfg.source, cfg.migrate
    if source not in SOURCES:
        raise ConfigError(f"source={source!r}; valid sources: {list(SOURCES)} (e.g. `nnfuzz migrate source=onnx-node "
                          f"out=migrated/`)")
    out = Path(str(cfg.out))
    dest = out / source
    if dest.exists() and any(dest.iterdir()):
        raise ConfigError(f"out={out}: {dest} already holds migrated tests; remove it or pass another out=")
    knobs = _knobs(m)
    tolerances = {k: tuple(v) for k, v in OmegaConf.to_container(cfg.fuzz.tolerances).items()}
    probe = None
    if m.backend:
        from nnfuzz.migrate.probe_filter import ProbeFilter

        probe = ProbeFilter(str(m.backend))
        if probe.note:
            print(f"nnfuzz migrate: {probe.note}", file=sys.stderr)
    tally = Tally(source)
    units = _units(source, knobs)
    taken: set = set()
    with Progress(len(units), f"migrate {source}", str(cfg.ui)) as prog, _runner(source, knobs, tolerances) as runner:
        for unit in units:
            for test in _migrate(source, unit, runner, tolerances, tally, prog):
                why = probe.reason(test) if probe else None
                if why:
                    tally.dropped[why] += 1
                    continue
                from nnfuzz.migrate.record import folder_name, write_migrated

                write_migrated(dest / folder_name(test.test, taken), test)
                tally.migrated += 1
                tally.undefined += test.undefined
            prog.advance(f"{tally.migrated} migrated")
    order = _prioritize(out, int(m.seed))
    _summary(out, tally)
    result({**tally.to_json(), "out": str(out), "prioritized": order},
           lambda: print(f"migrated {tally.migrated} tests into {dest}; {order} folders under {out} in priority "
                         f"order: {out / 'priority.json'} (nnfuzz fuzz fuzz.source={out})"))
    errors = tally.dropped.get("nnfuzz-error", 0)
    if errors:
        print(f"nnfuzz migrate: {errors} tests failed inside nnfuzz (messages above): a bug in nnfuzz", file=sys.stderr)
    return 1 if errors else 0


def _knobs(m) -> dict:
    from omegaconf import OmegaConf

    ops = OmegaConf.to_container(m.ops) if m.ops is not None else None
    if ops is not None and (not isinstance(ops, list) or not all(isinstance(o, str) for o in ops)):
        raise ConfigError(f"migrate.ops={ops!r} must be a list of operator names, e.g. migrate.ops=[Abs,Conv]")
    max_per_op = m.max_per_op
    if isinstance(max_per_op, bool) or not isinstance(max_per_op, int) or max_per_op < 1:
        raise ConfigError(f"migrate.max_per_op={max_per_op!r} must be an integer >= 1")
    dtypes = list(OmegaConf.to_container(m.dtypes))
    from nnfuzz.abstract.dtype import DType

    bad = [d for d in dtypes if d not in {t.value for t in DType}]
    if bad or not dtypes:
        raise ConfigError(f"migrate.dtypes={dtypes!r}: valid dtypes are {[t.value for t in DType]}")
    from nnfuzz.materialize.onnx.spec import ExportSpec

    ExportSpec(via="torch", opset=m.opset)  # a bad opset is a ConfigError showing the range
    return {"ops": set(ops) if ops is not None else None, "max_per_op": max_per_op, "dtypes": dtypes,
            "opset": int(m.opset), "multi_node": bool(m.multi_node)}


def _units(source: str, k: dict) -> list:
    """What the progress bar counts: ONNX test cases, or OpInfo entries."""
    if source == "onnx-node":
        from nnfuzz.migrate.onnx_node import cases

        return cases(k["ops"], k["multi_node"])
    from nnfuzz.migrate.torch_opinfo import entries

    return entries(k["ops"])


def _runner(source: str, knobs: dict, tolerances):
    """The worker process OpInfo samples run in (isolate.py); nothing for the ONNX tests."""
    if source == "onnx-node":
        return contextlib.nullcontext()
    from nnfuzz.migrate.isolate import EntryRunner

    return EntryRunner(knobs, tolerances)


def _migrate(source: str, unit, runner, tolerances, tally, prog):
    """The migrated tests of one unit; each library test collected is counted, each dropped one by reason.
    An exception other than Dropped is a bug in nnfuzz: shown with its traceback, counted as
    "nnfuzz-error" (the command then exits 1), and the run goes on with the next test. OpInfo samples run
    in a worker process (migrate/isolate.py): one the library dies on is dropped as "library-crash"."""
    from nnfuzz.migrate.record import Dropped

    if source == "onnx-node":
        from nnfuzz.migrate.onnx_node import migrate_case

        tally.collected += len(unit.data_sets)
        with _counted(tally, unit.name, prog, len(unit.data_sets)) as tests:
            tests += list(migrate_case(unit, tolerances))
        yield from tests
        return
    from nnfuzz.migrate.torch_opinfo import op_name

    for event in runner.events(op_name(unit)):
        tally.collected += 1
        if event[0] == "test":
            yield event[2]
        elif event[0] == "drop":
            tally.dropped[event[2]] += 1
            if event[2].startswith("library-"):
                prog.log(f"{event[1]}: torch itself died or hung on this sample ({event[2]}): dropped")
        else:
            tally.dropped["nnfuzz-error"] += 1
            prog.log(f"{event[1]}: nnfuzz error (a bug in nnfuzz, not in the library):\n{event[2]}")


@contextlib.contextmanager
def _counted(tally, name: str, prog, n: int = 1):
    """Yields a list for the tests made; a Dropped is counted by reason, another exception as an nnfuzz error."""
    from nnfuzz.migrate.record import Dropped

    try:
        yield []
    except Dropped as e:
        tally.dropped[e.reason] += n
    except Exception:  # noqa: BLE001 - a bug in nnfuzz: shown in full and counted, never silent
        tally.dropped["nnfuzz-error"] += n
        prog.log(f"{name}: nnfuzz error (a bug in nnfuzz, not in the library):\n{traceback.format_exc()}")


def _prioritize(out: Path, seed: int) -> int:
    """Order every migrated folder under ``out`` (all sources) into out/priority.json; returns how many."""
    from nnfuzz.migrate.priority import Candidate, known_operators, prioritize, write_order
    from nnfuzz.triage.meta import read_meta

    cands = []
    for meta_path in sorted(out.glob("*/*/meta.json")):
        meta = read_meta(meta_path)
        if meta.migration is not None:
            cands.append(Candidate.of(meta_path.parent.relative_to(out).as_posix(), meta.migration))
    write_order(out, prioritize(cands, known_operators(), seed), seed)
    return len(cands)


def _summary(out: Path, tally) -> None:
    """The summary table (stderr) and out/summary.json (one entry per source migrated into ``out``)."""
    from rich.console import Console
    from rich.table import Table

    from nnfuzz.triage.folder import atomic_write_text

    path = out / "summary.json"
    doc = json.loads(path.read_text()) if path.is_file() else {}  # written atomically: whole or absent
    doc[tally.source] = tally.to_json()
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(doc, indent=1))
    table = Table(title=f"nnfuzz migrate -> {out}")
    for col in ("source", "collected", "migrated", "of which undefined (NaN/Inf)", "dropped: reason"):
        table.add_column(col)
    for src, t in doc.items():
        drops = ", ".join(f"{r} {n}" for r, n in sorted(t["dropped"].items(), key=lambda x: -x[1])) or "none"
        table.add_row(src, str(t["collected"]), str(t["migrated"]), str(t["undefined"]), drops)
    Console(file=sys.stderr, width=160).print(table)
