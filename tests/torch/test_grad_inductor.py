"""oracle=grad on real TorchInductor (inductor-cpu): real graphs' compiled forward and backward agree with
torch eager's (no false alarm), and a bug folder's payload carries the backward."""
import pytest

from nnfuzz.generate.policy import GenPolicy

pytestmark = pytest.mark.slow

OPS = ["Add", "Mul", "Sub", "Tanh", "Sigmoid", "Exp", "MatMul", "Relu", "Abs", "ReduceSum", "Transpose", "Softmax",
       "BatchNormTraining", "Floor", "Max"]


def test_real_graphs_pass_forward_and_backward_on_inductor_cpu(tmp_path):
    from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign

    cc = CampaignConfig(backend="inductor-cpu", backend_options={}, out=tmp_path / "bugs", ui="plain",
                        executor="inprocess", time_s=120.0, probe=False, reduce=False, oracle="grad", max_tests=4,
                        policy=GenPolicy(max_nodes=5, dtypes=["float32"], include=OPS, seed=7))
    counters = run_campaign(cc)
    assert counters.tests == 4 and counters.verdicts["pass"] == 4 and counters.bugs_saved == 0, counters
    assert counters.nnfuzz_errors == 0, counters.last_error


def test_the_compiled_backward_matches_eager_on_one_graph():
    """One graph straight through the backend: forward outputs and every gradient within tolerance."""
    import numpy as np

    from nnfuzz.backends.inductor import InductorCpuBackend
    from nnfuzz.materialize.portable import pack
    from nnfuzz.materialize.torch.grad import eager
    from nnfuzz.ops.elementwise.spec import Sigmoid, Tanh
    from nnfuzz.verdict import compare
    from graphs import chain

    gir = chain(Tanh(), Sigmoid(), shape=(3, 4))
    x = {"x": np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)}
    spec, upstream, expected = eager(gir, {}, x, seed=5)
    backend = InductorCpuBackend()
    compiled = backend.compile(pack(gir.dumps(), {}, None, spec.to_json()))
    got = backend.run(compiled, {**x, **upstream})
    assert set(got) == {"v1", "grad:x"}
    assert not compare(expected, got).is_bug
    assert not np.allclose(got["grad:x"], 0)


def test_a_maxpool_window_of_equal_values_passes_on_inductor_cpu():
    """The ranked kinks' regression case (tests/grad_check.py) on the real system: start values tied in every
    MaxPool window, moved apart by the search, compiled forward and backward agree with eager's."""
    import numpy as np

    from grad_check import judged_grad, tied_maxpool, window_gaps
    from nnfuzz.fuzz.inprocess import InProcessSandbox

    model = tied_maxpool(kinks=True)
    assert np.all(window_gaps(model.oracle.input["x"]) > 0)
    with InProcessSandbox("inductor-cpu", {}) as sb:
        assert judged_grad(model, sb, seed=3).verdict.label == "pass"


def test_a_real_forward_crash_in_a_gradient_test_signs_as_the_forward_only_crash():
    """bugs/kept/0017 (inductor-cpu's C++ compile error on an int16 Sign -> Max, found by oracle=reference)
    beside a float path that gives the graph a gradient: the run fails in its forward part, and the crash's
    signature is the forward-only one (no ``backward`` term)."""
    from pathlib import Path

    import numpy as np

    from nnfuzz.abstract import AbsTensor, DType
    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.gir import GraphIR, Inst
    from nnfuzz.materialize.model import ReferenceData
    from nnfuzz.materialize.portable import pack
    from nnfuzz.materialize.torch.grad import eager
    from nnfuzz.ops.elementwise.spec import Tanh
    from nnfuzz.triage.bugstore import load_bug
    from nnfuzz.triage.grad_judging import grad_record, judge_grad
    from nnfuzz.triage.judging import bug_signature, replay_meta
    from nnfuzz.triage.repro import recorded_signature
    from nnfuzz.verdict import DEFAULT_TOLERANCES

    bug = load_bug(Path(__file__).parents[2] / "bugs" / "kept" / "0017")
    g = GraphIR.loads(bug.gir_text)
    g.vars["x"], g.vars["t"] = AbsTensor([3, 4], DType.float32), AbsTensor([3, 4], DType.float32)
    g.inputs.append("x")
    g.insts.append(Inst(Tanh(), ["x"], ["t"]))
    g.outputs.append("t")
    g.check()
    x = {**bug.oracle["input"], "x": np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)}
    spec, upstream, expected = eager(g, {}, x, seed=1)
    with Sandbox("inductor-cpu", test_timeout=300) as sb:
        res = sb.run(pack(g.dumps(), {}, None, spec.to_json()), {**x, **upstream})
    assert (res.status, res.stage, res.part) == ("error", "compile", "forward"), (res.status, res.part, res.error)
    judged, failed, _, _ = judge_grad(res, ReferenceData({**x, **upstream}, expected), "inductor", DEFAULT_TOLERANCES)
    assert judged.verdict.is_bug and failed == "forward"
    meta = replay_meta(bug.meta.replace(oracle={**bug.meta.oracle, "kind": "grad"},
                                        grad=grad_record(spec.to_json(), failed)), judged, res, None)
    assert bug_signature(meta, judged.verdict) == recorded_signature(bug)
