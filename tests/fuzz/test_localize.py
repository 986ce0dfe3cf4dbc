"""Localization and blame on a real ONNX Runtime disagreement, and on the two other outcomes."""
import numpy as np
import pytest
from exported_ops import ExportedLogSigmoid
from graphs import chain
from testops import SameShapeFloat32

from nnfuzz.abstract import OP_REGISTRY, AbsTensor, DType
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.materialize.torch.lowering import lowers
from nnfuzz.reference.registry import evaluates
from nnfuzz.triage.localize import expose_all, localize

ort = pytest.importorskip("onnxruntime")


def run_ort(model, inputs):
    sess = ort.InferenceSession(model.onnx.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


def test_ort_logsigmoid_underflow_is_localized_and_blamed_on_ort():
    """The exporter writes torch's logsigmoid as Log(Sigmoid(x)); in float32 sigmoid(-150) underflows
    to 0 and ORT returns -inf where torch (and the numpy reference) give -150."""
    gir = chain(E.Relu(), E.Neg(), ExportedLogSigmoid(), E.Abs())
    x = np.array([1, 50, 100, 120, 150, 200], np.float32)
    loc = localize(gir, {}, {"x": x}, run_ort)
    assert loc.first_divergent_node == {"index": 2, "op": "ExportedLogSigmoid()", "var": "v2", "dtype": "float32"}
    assert loc.blame == "system-under-test", loc.note


def test_agreeing_system_gives_no_node():
    gir = chain(E.Relu(), E.Tanh())
    loc = localize(gir, {}, {"x": np.linspace(-2, 2, 6, dtype=np.float32)}, run_ort)
    assert loc.first_divergent_node is None and loc.blame == "undecided"


class WrongInTorch(SameShapeFloat32):
    """Specified as the identity; its torch lowering adds 1 (the reference framework is wrong)."""


@lowers(WrongInTorch)
def _wrong(op, x):
    return x + 1


@evaluates(WrongInTorch)
def _identity(op, x):
    return x


OP_REGISTRY.pop("WrongInTorch")


def test_blame_on_the_reference_framework_when_numpy_sides_with_the_system():
    """No real system is right where torch is wrong on demand: the system here is the numpy
    reference itself, run on the exposed graph."""
    from nnfuzz.reference import evaluate

    gir = chain(E.Relu(), WrongInTorch(), E.Sigmoid())
    x = np.linspace(-1, 1, 6, dtype=np.float32)

    def numpy_system(model, inputs):
        vals = evaluate(gir, {}, inputs)
        return {v: vals[v] for v in expose_all(gir).outputs}

    loc = localize(gir, {}, {"x": x}, numpy_system)
    assert loc.first_divergent_node["index"] == 1 and loc.first_divergent_node["var"] == "v1"
    assert loc.blame == "reference-framework", loc.note


class WrongInTorchBrokenEval(SameShapeFloat32):
    """Like WrongInTorch, with a numpy eval that raises (a fault of nnfuzz's reference)."""


@lowers(WrongInTorchBrokenEval)
def _wrong_too(op, x):
    return x + 1


@evaluates(WrongInTorchBrokenEval)
def _broken(op, x):
    raise ValueError("this eval is broken on purpose")


@onnx_lowers(WrongInTorch, WrongInTorchBrokenEval)  # the ONNX model is what the op specifies: the identity
def _identity_onnx(op, g, x):
    return g.op("Identity", x)


OP_REGISTRY.pop("WrongInTorchBrokenEval")


def test_a_failing_numpy_eval_is_recorded_as_such_not_as_undecided():
    gir = chain(E.Relu(), WrongInTorchBrokenEval(), E.Sigmoid())
    x = np.linspace(-1, 1, 6, dtype=np.float32)

    def system(model, inputs):  # right where torch is wrong: the identity
        v0 = np.maximum(inputs["x"], 0)
        return {"v0": v0, "v1": v0, "v2": 1 / (1 + np.exp(-v0))}

    loc = localize(gir, {}, {"x": x}, system)
    assert loc.first_divergent_node["index"] == 1
    assert loc.blame == "numpy-eval-failed" and "this eval is broken on purpose" in loc.note, loc


def _judge_and_settle(gir, x):
    """The one verdict path on real ONNX Runtime: judge, then each node's own error."""
    from nnfuzz.materialize.model import build_model
    from nnfuzz.triage.judging import judge_run, local_judges, settle_locally
    from nnfuzz.verdict import DEFAULT_TOLERANCES as TOL

    model = build_model(gir, 0, values=({}, {"x": x}))
    got = run_ort(model, {"x": x})

    class Res:  # a sandbox RunResult's fields that judging reads
        status, outputs, stage, error, detail, signal, seconds = "ok", got, "execute", "", "", None, {}

    judged = judge_run(Res, model.oracle.output, "ort", TOL, model.oracle)
    before = judged.verdict.label
    judged, loc = settle_locally(judged, got, model.oracle.output, *local_judges(gir, {}, {"x": x}, run_ort, TOL, True, got))
    return before, judged.verdict, loc


def test_ort_float64_shrink_is_caught_at_its_source_though_the_outputs_are_within_tolerance():
    """ORT 1.32 computes float64 Shrink in float32 (bugs/kept/0000): ~6e-8 relative, inside the float64
    tolerance (rtol 1e-6) on values away from zero, yet 1e8 ulps of the Shrink's own error."""
    gir = chain(OP_REGISTRY["Shrink"](lambd=0.5, bias=1.0), dtype=DType.float64, shape=(4, 6))
    x = np.random.default_rng(3).uniform(3, 10, size=(4, 6))
    before, verdict, loc = _judge_and_settle(gir, x)
    assert before == "pass" and verdict.label == "inconsistency", verdict
    assert loc.root_cause["op"] == "Shrink" and loc.root_cause["kind"] == "precision", loc
    assert loc.root_cause["ulps"] > 1e6 and loc.blame == "system-under-test"


def test_ort_float64_shrink_grown_downstream_is_named_after_the_shrink():
    """Downstream of the Shrink, a Log and a Reciprocal amplify its error past the tolerance; the
    first node beyond its own budget is still the Shrink."""
    gir = chain(OP_REGISTRY["Shrink"](lambd=0.5, bias=1.0), E.Log(), E.Reciprocal(), dtype=DType.float64,
                shape=(4, 6))
    x = np.random.default_rng(4).uniform(1.9, 2.1, size=(4, 6))  # Shrink ~ 1: Log ~ 0, its reciprocal large
    before, verdict, loc = _judge_and_settle(gir, x)
    assert verdict.label == "inconsistency", (before, verdict)
    assert (loc.root_cause["op"], loc.root_cause["index"], loc.root_cause["kind"]) == ("Shrink", 0, "precision"), loc


def test_an_agreeing_system_is_not_checked_node_by_node():
    gir = chain(E.Relu(), E.Tanh(), dtype=DType.float64)
    before, verdict, loc = _judge_and_settle(gir, np.linspace(-2, 2, 6))
    assert before == verdict.label == "pass" and loc is None


def test_a_crash_named_after_a_later_op_is_charged_to_the_node_whose_shape_is_wrong():
    """A system whose Relu (node 0) drops a dimension: shape inference then fails at the Softsign after
    the Tanh, and its error names Softsign. Run up to the Softsign with every value exposed, the first
    node wrong on its own inputs is the Relu. (No system drops a dimension on demand: the system here is
    ONNX Runtime with node 0's output sliced.)"""
    from nnfuzz.materialize.model import build_model
    from nnfuzz.triage.crash_prefix import crash_root_cause, named_instruction

    gir = chain(E.Relu(), E.Tanh(), E.Softsign(), shape=(2, 3))
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    model = build_model(gir, 0, values=({}, {"x": x}))
    assert named_instruction(gir, model.onnx, "Softsign") == 2 and named_instruction(gir, model.onnx, "Tanh") == 1

    def dropping(m, inputs):
        got = run_ort(m, inputs)
        return {k: (v[:1] if k == "v0" else v) for k, v in got.items()}

    root = crash_root_cause(gir, {}, {"x": x}, model.onnx, "Softsign", dropping)
    assert (root["op"], root["kind"], root["index"], root["method"], root["named"]) == ("Relu", "shape", 0, "prefix", "Softsign")
    assert crash_root_cause(gir, {}, {"x": x}, model.onnx, "Softsign", run_ort) is None  # a clean prefix: as reported


def test_one_kernel_fault_drawn_by_two_of_nnfuzzs_ops_is_one_root_cause():
    """nnfuzz's Softshrink is written as one ONNX Shrink: ORT's float64 Shrink fault found through it is
    signed Shrink, as when nnfuzz's own Shrink draws it."""
    from nnfuzz.triage.dedup import signature
    from nnfuzz.triage.meta import BugMeta

    sigs = set()
    for op in (OP_REGISTRY["Shrink"](lambd=0.5, bias=0.5), OP_REGISTRY["Softshrink"](lambd=0.5)):
        gir = chain(E.Abs(), op, dtype=DType.float64, shape=(4, 6))
        _, verdict, loc = _judge_and_settle(gir, np.random.default_rng(5).uniform(3, 10, size=(4, 6)))
        assert loc is not None and loc.root_cause["index"] == 1, (op, verdict, loc)
        sigs.add(signature(BugMeta(system="ort-cpu", symptom="inconsistency", root_cause=loc.root_cause)))
    assert sigs == {"ort-cpu | inconsistency | Shrink | precision"}


def test_a_crash_is_not_charged_to_a_wrong_node_that_does_not_feed_the_named_op():
    """Two branches from x: Relu -> Softsign, and Tanh. The Tanh (dropping a dimension here) does not
    feed the Softsign the error names: the crash stays as the system reports it."""
    from nnfuzz.materialize.model import build_model
    from nnfuzz.triage.crash_prefix import crash_root_cause, prefix

    g = GraphIR()
    g.vars["x"] = AbsTensor([2, 3], DType.float32)
    g.inputs = ["x"]
    for k, (op, src) in enumerate([(E.Tanh(), "x"), (E.Relu(), "x"), (E.Softsign(), "v1")]):
        g.vars[f"v{k}"] = op.checked_type_transfer([g.vars[src]])[0]
        g.insts.append(Inst(op, [src], [f"v{k}"]))
    g.outputs = ["v0", "v2"]
    g.check()
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    model = build_model(g, 0, values=({}, {"x": x}))
    assert [i.op.name for i in prefix(g, 2).insts] == ["Relu"]

    def tanh_dropping(m, inputs):
        return {k: (v[:1] if k == "v0" else v) for k, v in run_ort(m, inputs).items()}

    assert crash_root_cause(g, {}, {"x": x}, model.onnx, "Softsign", tanh_dropping) is None
