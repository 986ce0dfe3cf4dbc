"""The float64 twins' noise filter on real ORT: ill-conditioning is noise, a miscompilation is not.

The case folder ``tests/cases/ort-fmod-f64-noise/`` is a false alarm a campaign saved:
``fmod(v2, fmod(v2, i0 - tanh(i0)))`` in float64, where ORT's Tanh is 1 ulp off and the two fmods by a
tiny computed divisor turn that ulp into a result anywhere in [0, divisor). Each test replays a model
through the campaign's verdict sequence: judge, then (on an inconsistency) the twins, then judge again.
"""
from pathlib import Path

import numpy as np
import onnx
import pytest

from nnfuzz.fuzz.produce import Produced
from nnfuzz.fuzz.sandbox import Sandbox
from nnfuzz.materialize.model import ReferenceData
from nnfuzz.triage.bugstore import load_bug
from nnfuzz.triage.judging import judge_run
from nnfuzz.verdict import DEFAULT_TOLERANCES, Symptom, judge

pytest.importorskip("onnxruntime")

CASE = Path(__file__).parents[1] / "cases" / "ort-fmod-f64-noise"


@pytest.fixture(scope="module")
def ort_cpu():
    with Sandbox("ort-cpu", {"opt_level": "all"}) as sandbox:
        sandbox.start()
        yield sandbox


def campaign_verdict(sandbox, bug, model_bytes=None, inputs=None, expected=None):
    """The verdict the campaign reaches for ``bug``'s graph (optionally another ONNX model, inputs, or
    reference): the system's run judged against the reference, re-judged with the float64 twins."""
    inputs = dict(bug.oracle["input"]) if inputs is None else inputs
    expected = bug.oracle["output"] if expected is None else expected
    res = sandbox.run(model_bytes or bug.model_bytes, inputs)
    p = Produced(seed=int(bug.meta.seed), rec={}, gir_text=bug.gir_text,
                 reference=ReferenceData(inputs, expected))
    judged = judge_run(res, expected, "ort", DEFAULT_TOLERANCES, p.reference, p.twins)
    if judged.verdict.symptom is Symptom.inconsistency:
        assert judged.twin["available"], judged.twin["note"]
    return judged.verdict


def reference(bug, inputs):
    """The torch-eager reference of ``bug``'s graph on ``inputs`` (what the campaign compares with)."""
    from nnfuzz.gir import GraphIR
    from nnfuzz.materialize.model import build_model

    return build_model(GraphIR.loads(bug.gir_text), 0, export=False, values=({}, inputs)).oracle.output


def tampered(model_bytes: bytes, how: str) -> bytes:
    """The ONNX model miscompiled on purpose: Tanh replaced by Sigmoid (a wrong op), or every output
    scaled by 1 + 1e-4 (a small systematic error, 100x the float64 rtol)."""
    m = onnx.load_from_string(model_bytes)
    if how == "wrong-op":
        next(n for n in m.graph.node if n.op_type == "Tanh").op_type = "Sigmoid"
    else:
        out = m.graph.output[0].name
        for n in m.graph.node:
            n.output[:] = [f"{o}_raw" if o == out else o for o in n.output]
        m.graph.initializer.append(onnx.numpy_helper.from_array(np.array(1 + 1e-4), "scale"))
        m.graph.node.append(onnx.helper.make_node("Mul", [f"{out}_raw", "scale"], [out]))
    onnx.checker.check_model(m, full_check=True)
    return m.SerializeToString()


@pytest.mark.parametrize("folder", [CASE, CASE / "original"], ids=["reduced", "as-found"])
@pytest.mark.slow
def test_ill_conditioned_fmod_is_noise(ort_cpu, folder):
    bug = load_bug(folder)
    plain = judge(ort_cpu.run(bug.model_bytes, dict(bug.oracle["input"])), bug.oracle["output"], "ort")
    assert plain.symptom is Symptom.inconsistency, "ORT no longer differs here: the case tests nothing"
    verdict = campaign_verdict(ort_cpu, bug)
    assert not verdict.is_bug, verdict.detail


def well_conditioned_inputs(bug):
    """The case's inputs moved where its graph is well-conditioned: tanh shrinks nothing tiny
    (|i0| in [1, 3]) and the fmods divide by values of the size of the dividend."""
    rng = np.random.default_rng(0)
    shape = bug.oracle["input"]["i0"].shape
    return {"i0": rng.uniform(1.0, 3.0, shape), "v2": rng.uniform(0.5, 2.0, shape)}


@pytest.mark.slow
def test_the_same_graph_passes_where_well_conditioned(ort_cpu):
    bug = load_bug(CASE)
    inputs = well_conditioned_inputs(bug)
    assert not campaign_verdict(ort_cpu, bug, inputs=inputs, expected=reference(bug, inputs)).is_bug


@pytest.mark.parametrize("how", ["wrong-op", "systematic-1e-4"])
@pytest.mark.slow
def test_a_miscompilation_is_still_an_inconsistency(ort_cpu, how):
    bug = load_bug(CASE)
    inputs = well_conditioned_inputs(bug)
    verdict = campaign_verdict(ort_cpu, bug, tampered(bug.model_bytes, how), inputs, reference(bug, inputs))
    assert verdict.symptom is Symptom.inconsistency, verdict.summary


@pytest.mark.slow
def test_a_wrong_op_shows_even_on_the_ill_conditioned_inputs(ort_cpu):
    """The noise filter widens the margin only where rounding leaves a value undetermined, and not
    without bound: the noise case's own inputs still expose a wrong op."""
    bug = load_bug(CASE)
    verdict = campaign_verdict(ort_cpu, bug, tampered(bug.model_bytes, "wrong-op"))
    assert verdict.symptom is Symptom.inconsistency, verdict.summary


def test_compare_widens_the_margin_only_where_rounding_leaves_a_value_undetermined():
    """Envelopes stacked as add_twins writes them: rounding alone moves element 1 by 1e-3 (the graph
    does not determine it: a margin of 16 times that), element 0 by nothing (a 1e-3 error there is a
    bug). Even undetermined, element 1 may not be Inf or off by 1. A folder holding the coarse envelope
    alone is judged as before."""
    from nnfuzz.verdict import compare

    twin = {"y": np.array([1.0, 2e-5])}
    coarse = np.array([1.0 + 1e-12, 3e-5])
    rounding = np.array([1.0 + 1e-15, 1e-3])
    both = {"y": np.stack([coarse, rounding])}

    def verdict(y1, y0=1.0, jitter=both):
        return compare(twin, {"y": np.array([y0, y1])}, twin=twin, jitter=jitter)

    assert not verdict(9e-3).is_bug
    assert verdict(2e-5, y0=1.001).is_bug
    assert verdict(np.inf).is_bug and verdict(1.0).is_bug
    assert verdict(9e-3, jitter={"y": coarse}).is_bug
