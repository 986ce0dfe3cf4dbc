"""The migrated tests of an ``nnfuzz migrate`` output folder, in priority order, as the records a
campaign tests (fuzz/produce.py's ``Produced``): the ONNX bytes, the inputs and the source library's
expected outputs (None when they hold NaN/Inf: undefined behaviour, never compared). A migrated model
has no GraphIR (``gir_text`` None): no float64 twins, no localization, no reduction by graph."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator


def migrated_tests(out) -> Iterator:
    """``Produced`` records of the folders listed in ``out/priority.json``, in that order; ``seed`` is the
    rank and ``rec["migration"]`` is the folder's migration record (source, test, operator, ...) plus its
    ``folder``, for the bug's meta.json. A missing or malformed folder is a
    BugFolderError naming it (as ``nnfuzz repro`` reports a bug folder)."""
    from nnfuzz.fuzz.produce import Produced
    from nnfuzz.materialize.model import ReferenceData
    from nnfuzz.migrate.priority import read_order
    from nnfuzz.triage.bugstore import load_bug
    from nnfuzz.triage.folder import BugFolderError

    out = Path(out)
    for rank, folder in enumerate(read_order(out)):
        bug = load_bug(out / folder)
        mig = bug.meta.migration
        if mig is None:
            raise BugFolderError(f"{out / folder} is listed in {out}/priority.json but is not a migrated test "
                                 f"(its meta.json has no migration record); re-run `nnfuzz migrate`")
        o = bug.oracle
        rec = {"seed": rank, "nodes": bug.meta.nodes, "ops": bug.meta.ops, "opset": bug.meta.opset,
               "migration": {**mig, "folder": folder}}
        yield Produced(seed=rank, rec=rec, model_bytes=bug.model_bytes,
                       reference=ReferenceData(dict(o["input"]), None if o["output"] is None else dict(o["output"])))
