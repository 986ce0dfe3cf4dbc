"""The one verdict path (triage/judging.py): the float64 twins are asked for only on a disagreement,
and when they cannot be computed the verdict says so instead of silently judging without them."""
import numpy as np
import torch
from testops import SameShapeFloat32

from nnfuzz.abstract import OP_REGISTRY, AbsTensor, DType
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.fuzz.sandbox import RunResult
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.torch.lowering import lowers
from nnfuzz.reference.registry import evaluates
from nnfuzz.triage.judging import judge_run, model_twins


class Float32Only(SameShapeFloat32):
    """The identity, with a torch lowering that refuses float64 (like a kernel that insists on its dtype)."""


@lowers(Float32Only)
def _float32_only(op, x):
    if x.dtype == torch.float64:
        raise RuntimeError("Float32Only: expected a float32 tensor, got float64")
    return x * 1


@evaluates(Float32Only)
def _identity(op, x):
    return x


OP_REGISTRY.pop("Float32Only")


def model_of(*ops):
    g = GraphIR()
    g.vars["x"] = AbsTensor([4], DType.float32)
    g.inputs, prev = ["x"], "x"
    for k, op in enumerate(ops):
        g.vars[f"v{k}"] = op.checked_type_transfer([g.vars[prev]])[0]
        g.insts.append(Inst(op, [prev], [f"v{k}"]))
        prev = f"v{k}"
    g.outputs = [prev]
    return build_model(g.check(), 0, export=False, values=({}, {"x": np.linspace(-1, 1, 4, dtype=np.float32)}))


def ran(outputs):
    return RunResult("ok", "execute", outputs)


def test_twins_are_computed_only_for_a_disagreement():
    model = model_of(E.Tanh())
    asked = []

    def twins():
        asked.append(1)
        return model_twins(model)

    same = judge_run(ran(model.oracle.output), model.oracle.output, "ort", {}, model.oracle, twins)
    assert same.verdict.label == "pass" and not asked and same.twin is None
    off = {k: v + 1 for k, v in model.oracle.output.items()}
    judged = judge_run(ran(off), model.oracle.output, "ort", {}, model.oracle, twins)
    assert judged.verdict.label == "inconsistency" and asked == [1]
    assert judged.twin == {"available": True, "note": ""} and judged.reference.output_f64 is not None


def test_an_unavailable_twin_is_recorded_with_the_reason():
    model = model_of(E.Relu(), Float32Only())
    off = {k: v + 1 for k, v in model.oracle.output.items()}
    judged = judge_run(ran(off), model.oracle.output, "ort", {}, model.oracle, lambda: model_twins(model))
    assert judged.verdict.label == "inconsistency"
    assert judged.twin["available"] is False and "expected a float32 tensor" in judged.twin["note"], judged.twin
    no_twins = judge_run(ran(off), model.oracle.output, "ort", {}, model.oracle)  # e.g. an old oracle.pkl
    assert no_twins.twin == {"available": False, "note": "no float64 twin was recorded with the reference (oracle.pkl)"}
