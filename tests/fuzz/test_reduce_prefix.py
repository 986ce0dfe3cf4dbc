"""Reducing a crash charged to a node before the op its error names (triage/crash_prefix.py, method prefix):
each candidate's root cause is found again, so a reduction cannot keep a crash whose cause was deleted
(issue 26 item 7: a TVM Resize crash was reduced to a lone Resize still signed by a OneHot it no longer held)."""
import types

import numpy as np
import pytest
from graphs import chain

from nnfuzz.fuzz.sandbox import RunResult
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.triage.meta import BugMeta
from nnfuzz.triage.node_deletion import Candidate

ort = pytest.importorskip("onnxruntime")

CRASH = "Fail: [ONNXRuntimeError] : 1 : FAIL : Node (Softsign_2) Op (Softsign) [ShapeInferenceError] rank mismatch"


class RelusDropARow:
    """ONNX Runtime with one fault put in: a Relu's output loses its second row, and a model holding a
    Softsign fails to compile naming it (as a system's shape inference fails at the op after a wrong
    shape). A model without the Relu still fails at its Softsign: another bug, not the Relu's."""
    backend_info = types.SimpleNamespace(name="ort-cpu", engine="ort")

    def run_model(self, model, inputs, fmt="onnx"):
        if any(isinstance(inst.op, E.Softsign) for inst in model.gir.insts):
            return RunResult("error", "compile", None, error=CRASH, detail=CRASH, exc_type="Fail")
        sess = ort.InferenceSession(model.onnx.SerializeToString(), providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        relus = {inst.outputs[0] for inst in model.gir.insts if isinstance(inst.op, E.Relu)}
        got = dict(zip(names, sess.run(names, inputs)))
        return RunResult("ok", "execute", {k: (v[:1] if k in relus else v) for k, v in got.items()})


def test_a_candidate_without_the_charged_node_is_another_crash():
    from nnfuzz.materialize.model import build_model
    from nnfuzz.triage.bug_reduction import Checker
    from nnfuzz.triage.crash_prefix import crash_root_cause

    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    full = chain(E.Relu(), E.Tanh(), E.Softsign(), shape=(2, 3))
    sandbox = RelusDropARow()
    model = build_model(full, 0, values=({}, {"x": x}))
    root = crash_root_cause(full, {}, {"x": x}, model.onnx, "Softsign",
                            lambda m, i: sandbox.run_model(m, i).outputs)
    assert (root["op"], root["kind"], root["method"]) == ("Relu", "shape", "prefix")
    meta = BugMeta(system="ort-cpu", version="?", version_id="?", symptom="crash", stage="compile", summary=CRASH,
                   nodes=3, format="onnx", root_cause=root)
    check = Checker(sandbox, meta, {})
    want = check.signature(Candidate(full, {}, {"x": x}))
    assert want == "ort-cpu | inconsistency | Relu | shape"  # the Relu's fault, which the Softsign failed on
    # the Relu deleted: the Softsign still fails, but nothing before it is wrong now
    other = check.signature(Candidate(chain(E.Tanh(), E.Softsign(), shape=(2, 3)), {}, {"x": x}))
    assert other != want and "Relu" not in other and "Softsign" in other, other
    assert check.bug_meta.root_cause is None
    # the Relu alone: its wrong shape shows in the outputs, the same fault, signed alike
    shown = check.signature(Candidate(chain(E.Relu(), shape=(2, 3)), {}, {"x": x}))
    assert shown == want and check.bug_meta.symptom == "inconsistency", (shown, check.bug_meta.symptom)
    assert check.bug_meta.root_cause["method"] == "local-error"

