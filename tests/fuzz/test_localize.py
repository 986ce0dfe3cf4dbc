"""Localization and blame on a real ONNX Runtime disagreement, and on the two other outcomes."""
import numpy as np
import pytest
from exported_ops import ExportedLogSigmoid
from testops import SameShapeFloat32

from nnfuzz.abstract import OP_REGISTRY, AbsTensor, DType
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.materialize.torch.lowering import lowers
from nnfuzz.reference.registry import evaluates
from nnfuzz.triage.localize import expose_all, localize

ort = pytest.importorskip("onnxruntime")


def chain(*ops, shape=(6,)):
    g = GraphIR()
    g.vars["x"] = AbsTensor(list(shape), DType.float32)
    g.inputs = ["x"]
    prev = "x"
    for k, op in enumerate(ops):
        out = f"v{k}"
        g.vars[out] = op.checked_type_transfer([g.vars[prev]])[0]
        g.insts.append(Inst(op, [prev], [out]))
        prev = out
    g.outputs = [prev]
    return g.check()


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
