"""Localizing a dynamic model's inconsistency (nnfuzz/triage/dynamic_local.py): at the shape it showed at, the
graph with every value exposed, in its dynamic form, compiled once and run at the shapes up to it; each
node's own error names the root cause, and the signature keeps "dynamic" where only the dynamic form fails.
The fault is a fake's (a Sigmoid wrong only in a model with a dim_param input): no real system gives a
dynamic-only fault on demand."""
import pytest
from dynamic_bugs import dynamic_build
from fake_backends import FakeBackend, FakeSymbolicSigmoidBackend, fake_campaign, folders

from nnfuzz.triage.bugstore import load_bug
from nnfuzz.triage.dynamic_local import localize_at
from nnfuzz.verdict import DEFAULT_TOLERANCES

OPS = ("Sigmoid", "Add", "Relu", "Mul")


def _with_sigmoid():
    gir, built, _ = dynamic_build(1, OPS, having="Sigmoid")
    return gir, built


def _run_shapes(backend):
    def run(payload, inputs):
        compiled = backend.compile(payload)
        return [backend.run(compiled, x) for x in inputs]
    return run


def test_a_dynamic_only_fault_is_localized_at_its_shape_to_its_op():
    gir, built = _with_sigmoid()
    k = len(built.shapes) - 1
    inputs = [r.input for r in built.shapes]
    wrong = _run_shapes(FakeSymbolicSigmoidBackend())
    shown = wrong(built.onnx.SerializeToString(), inputs)[k]
    loc = localize_at(gir, built.family, k, built.model.weights, inputs, wrong, "onnx", DEFAULT_TOLERANCES,
                      built.model.export, shown)
    assert loc.root_cause is not None and loc.root_cause["op"] == "Sigmoid", loc
    assert loc.root_cause["method"] == "local-error" and loc.blame == "system-under-test", loc
    # the same graph on a system right at every shape: nothing to blame
    right = _run_shapes(FakeBackend())
    loc = localize_at(gir, built.family, k, built.model.weights, inputs, right, "onnx", DEFAULT_TOLERANCES,
                      built.model.export, right(built.onnx.SerializeToString(), inputs)[k])
    assert loc.root_cause is None or loc.noise, loc


@pytest.mark.slow
def test_a_campaign_signs_a_dynamic_only_fault_with_its_op_and_the_replay_agrees(tmp_path):
    from nnfuzz.fuzz.inprocess import InProcessSandbox
    from nnfuzz.generate.policy import GenPolicy
    from nnfuzz.triage.repro import REPRODUCED, replay

    policy = GenPolicy(max_nodes=4, dtypes=["float32"], include=list(OPS), seed=2)
    counters, cc = fake_campaign(tmp_path / "bugs", backend="FakeSymbolicSigmoidBackend", max_tests=6, dynamic=1.0,
                                 rerun=False, policy=policy)
    metas = [load_bug(f).meta for f in folders(cc.out)]
    dyn = [m for m in metas if m.dynamic is not None]
    assert dyn, counters
    for m in dyn:
        assert m.dynamic["static"] == "passes" and m.root_cause["op"] == "Sigmoid", (m.root_cause, m.localization_note)
        assert m.signature == "fake-cpu | inconsistency | dynamic | Sigmoid | values", m.signature
    bug = load_bug(next(f for f in folders(cc.out) if load_bug(f).meta.dynamic is not None))
    sandbox = InProcessSandbox("fake-cpu", backend_path="fake_backends:FakeSymbolicSigmoidBackend")
    r = replay(bug, sandbox, DEFAULT_TOLERANCES)
    assert r.outcome == REPRODUCED and r.meta.root_cause["op"] == "Sigmoid", (r.signature, r.recorded_signature)


def test_a_shape_whose_nodes_are_all_within_budget_is_noise_and_the_judging_goes_on():
    """settle_shapes: an inconsistency at a shape that localization calls rounding noise is no failure (as for a
    static test); the next failing shape gives the verdict, and none left is a pass."""
    import numpy as np

    from nnfuzz.fuzz.sandbox import RunResult
    from nnfuzz.materialize.model import ReferenceData
    from nnfuzz.triage.dynamic_local import settle_shapes
    from nnfuzz.triage.localize import Localization

    refs = [ReferenceData({"x": np.zeros(2, np.float32)}, {"y": np.full(2, float(j), np.float32)}) for j in range(3)]
    outs = [{"y": np.full(2, float(j), np.float32)} for j in range(3)]
    outs[1]["y"] = outs[1]["y"] + 1  # off at shape 1
    asked = []

    def localize(k, outputs):
        asked.append(k)
        return Localization(None, "undecided", f"shape {k}", noise=k == 1)

    def run(shapes):
        return RunResult("ok", "execute", shapes[-1], shapes=shapes, compiles=1)

    judged, k, _, loc = settle_shapes(run(outs), refs, "ort", DEFAULT_TOLERANCES, None, localize)
    assert not judged.verdict.is_bug and k is None and loc.noise and judged.verdict.summary.startswith("noise at shape 1")
    outs[2]["y"] = outs[2]["y"] - 1  # and at shape 2, not noise there
    judged, k, _, loc = settle_shapes(run(outs), refs, "ort", DEFAULT_TOLERANCES, None, localize)
    assert judged.verdict.label == "inconsistency" and k == 2 and loc.note == "shape 2" and asked == [1, 1, 2]
    judged, k, _, loc = settle_shapes(run(outs), refs, "ort", DEFAULT_TOLERANCES)  # not localized: the first one
    assert judged.verdict.label == "inconsistency" and k == 1 and loc is None
