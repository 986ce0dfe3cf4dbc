"""What the `nnfuzz repro --script/--report` tests share: a bug folder as a campaign saves it for a system
that takes GraphIR payloads (model.gir), and the modules a standalone script imports."""
import ast

import numpy as np

from nnfuzz.generate import GenPolicy, generate_graph
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.portable import pack
from nnfuzz.triage.bugstore import BugStore
from nnfuzz.triage.meta import BugMeta


def gir_bug(tmp_path, system, dtype="float32", corrupt=True):
    """A two-node Relu/Neg bug of ``system`` under ``tmp_path/bugs``, its recorded reference off by one
    (``corrupt``: the real outputs disagree with it) or exact."""
    gir = generate_graph(GenPolicy(max_nodes=2, dtypes=[dtype], include=["Relu", "Neg"]), seed=5)
    model = build_model(gir, 5, export=False)
    oracle = model.oracle.to_dict()
    if corrupt:
        oracle["output"] = {k: (v.astype(np.float32) + 1).astype(v.dtype) for k, v in oracle["output"].items()}
    oracle["output_f64"] = oracle["output_f64_jitter"] = None
    meta = BugMeta(system=system, version="x", symptom="inconsistency", version_id="x", stage="verify",
                   summary="test bug", format="gir", ops=[i.op.name for i in gir.insts])
    return BugStore(tmp_path / "bugs").save(model_bytes=pack(gir.dumps(), model.weights), gir_text=gir.dumps(),
                                            oracle=oracle, meta=meta, err_log="test")


def imports_of(text):
    """The top-level modules a script imports."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module.split(".")[0])
    return found
