"""oracle=grad on XLA (xla-cpu against tf-cpu, TF eager): the tape's gradients inside the compiled function
agree with eager's, and with torch eager's on the same graph (backends/tf_grad.py)."""
import numpy as np
import pytest

pytestmark = pytest.mark.slow
pytest.importorskip("tensorflow")

OPS = ["Add", "Mul", "Sub", "Tanh", "Sigmoid", "Exp", "MatMul", "Relu", "Abs", "ReduceSum", "Transpose", "Softmax",
       "BatchNormTraining", "Floor", "Max"]


def test_real_graphs_pass_forward_and_backward_on_xla_cpu(tmp_path):
    from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
    from nnfuzz.generate.policy import GenPolicy

    cc = CampaignConfig(backend="xla-cpu", backend_options={}, out=tmp_path / "bugs", ui="plain", executor="inprocess",
                        time_s=120.0, probe=False, reduce=False, oracle="grad", max_tests=4,
                        policy=GenPolicy(max_nodes=5, dtypes=["float32"], include=OPS, seed=7))
    counters = run_campaign(cc)
    assert counters.tests == 4 and counters.verdicts["pass"] == 4 and counters.bugs_saved == 0, counters


def test_xla_and_tf_eager_gradients_match_torch_eager_on_one_graph():
    from graphs import chain

    from nnfuzz.backends.tf import TfEagerBackend, XlaCpuBackend
    from nnfuzz.materialize.portable import pack
    from nnfuzz.materialize.torch.grad import eager
    from nnfuzz.ops.elementwise.spec import Sigmoid, Tanh
    from nnfuzz.verdict import compare

    gir = chain(Tanh(), Sigmoid(), shape=(3, 4))
    x = {"x": np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)}
    spec, upstream, expected = eager(gir, {}, x, seed=5)
    payload = pack(gir.dumps(), {}, None, spec.to_json())
    for backend in (TfEagerBackend(), XlaCpuBackend()):
        got = backend.run(backend.compile(payload), {**x, **upstream})
        assert set(got) == {"v1", "grad:x"} and not compare(expected, got).is_bug, backend.name


def test_an_xla_gradient_bug_reduces_against_tf_eager(tmp_path):
    """A backward fault of a system compared with TF eager (a fake: tf_grad_backends.py) is saved against
    tf-cpu and reduced with each candidate run on TF eager too: fewer nodes, the backward signature kept, and
    oracle.pkl's expected gradients TF eager's. Without a TF eager sandbox it is not reduced, and says why."""
    from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
    from nnfuzz.fuzz.inprocess import InProcessSandbox
    from nnfuzz.generate.policy import GenPolicy
    from nnfuzz.triage.bug_reduction import expected_side, reduce_bug
    from nnfuzz.triage.bugstore import BUG_DIR, load_bug
    from nnfuzz.verdict import DEFAULT_TOLERANCES

    path = "tf_grad_backends:DoubledGradXlaBackend"
    cc = CampaignConfig(backend="wrongxla-cpu", backend_options={"jit_compile": False}, backend_path=path,
                        out=tmp_path / "bugs", ui="plain", executor="inprocess", time_s=120.0, probe=False,
                        reduce=False, oracle="grad", max_tests=3, rerun=False,
                        policy=GenPolicy(max_nodes=5, dtypes=["float32"], include=["Add", "Mul", "Tanh", "Sigmoid"], seed=3))
    counters = run_campaign(cc)
    assert counters.verdicts["inconsistency"] == 3, counters
    saved = [f for f in (tmp_path / "bugs").iterdir() if BUG_DIR.match(f.name)]
    folder = max(saved, key=lambda f: load_bug(f).meta.nodes)
    bug = load_bug(folder)
    want = "wrongxla-cpu | inconsistency | backward | values"
    assert bug.meta.signature == want and bug.meta.oracle["expected"]["system"] == "tf-cpu" and bug.meta.nodes > 1
    assert expected_side(bug) == ("tf-cpu", {})
    with InProcessSandbox("wrongxla-cpu", {"jit_compile": False}, backend_path=path) as sb:
        alone = reduce_bug(bug, sb, DEFAULT_TOLERANCES, 60.0)
        assert alone["status"] == "not-reduced" and "needs a sandbox of tf-cpu" in alone["note"], alone
        with InProcessSandbox("tf-cpu", {}) as tf_eager:
            summary = reduce_bug(bug, sb, DEFAULT_TOLERANCES, 120.0, expected=tf_eager)
            after = load_bug(folder)
            got = sb.run(after.model_bytes, after.oracle["input"]).outputs
            theirs = tf_eager.run(after.model_bytes, after.oracle["input"]).outputs
    assert summary["status"] == "reduced" and summary["nodes_after"] < summary["nodes_before"], summary
    assert after.meta.signature == want and after.meta.grad["failed"] == "backward"
    for g in after.meta.grad["gradients"]:  # the expected gradients are TF eager's, the system's twice them
        np.testing.assert_allclose(after.oracle["output"][g], theirs[g], rtol=1e-6)
        np.testing.assert_allclose(got[g], 2 * theirs[g], rtol=1e-6)


def test_a_gathers_sparse_gradient_comes_out_dense_on_xla_and_tf_eager():
    """TF's gradient of a gather is IndexedSlices (the gathered rows only): an xla-cpu campaign crashed on its
    .numpy() (a false crash, 1 Gather). Dense, it matches torch eager's, rows gathered twice summed."""
    from graphs import chain

    from nnfuzz.backends.tf import TfEagerBackend, XlaCpuBackend
    from nnfuzz.materialize.portable import pack
    from nnfuzz.materialize.torch.grad import eager
    from nnfuzz.ops.combine.spec import Gather
    from nnfuzz.verdict import compare

    gir = chain(Gather(0, 2, 0, 2), shape=(3, 2))
    x = {"x": np.arange(6, dtype=np.float32).reshape(3, 2)}
    spec, upstream, expected = eager(gir, {}, x, seed=5)
    payload = pack(gir.dumps(), {}, None, spec.to_json())
    for backend in (TfEagerBackend(), XlaCpuBackend()):
        got = backend.run(backend.compile(payload), {**x, **upstream})
        assert not compare(expected, got).is_bug, backend.name
        assert np.all(got["grad:x"][1] == 0) and np.any(got["grad:x"][[0, 2]] != 0)

def test_the_kept_tf_eager_gradient_crash_reduces_on_tf_eager_keeping_its_signature(tmp_path, capsys):
    """bugs/kept/0075: TF eager's MaxPool3D gradient crashes (found via xla-cpu; the bug is the expected side's,
    so it reduces on tf-cpu alone). `nnfuzz reduce` on its original 6-node folder: one node, signature kept."""
    import json
    import shutil
    from pathlib import Path

    from nnfuzz.cli import main
    from nnfuzz.triage.bug_reduction import expected_side
    from nnfuzz.triage.bugstore import load_bug
    from nnfuzz.triage.repro import recorded_signature

    kept = Path(__file__).parents[2] / "bugs" / "kept" / "0075"
    folder = tmp_path / "0000"
    shutil.copytree(kept / "original", folder)
    bug = load_bug(folder)
    want = recorded_signature(bug)
    assert bug.meta.nodes == 6 and bug.meta.oracle["side"] == "expected" and expected_side(bug) is None
    capsys.readouterr()
    assert main(["reduce", "--json", str(folder)]) == 0
    summary = json.loads(capsys.readouterr().out)
    after = load_bug(folder)
    assert summary["status"] == "reduced" and summary["nodes_after"] == 1, summary
    assert recorded_signature(after) == want == \
        "tf-cpu | crash | execute | backward | AttributeError | <name> object has no attribute <name>"
    assert after.meta.ops == ["MaxPool3d"]


def test_a_campaigns_background_reducer_reduces_an_xla_gradient_bug_against_tf_eager(tmp_path):
    """fuzz.reduce: the reducer opens a tf-cpu sandbox beside the system's for a bug found against TF eager."""
    import json

    from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
    from nnfuzz.generate.policy import GenPolicy

    cc = CampaignConfig(backend="wrongxla-cpu", backend_options={"jit_compile": False},
                        backend_path="tf_grad_backends:DoubledGradXlaBackend", out=tmp_path / "bugs", ui="plain",
                        executor="inprocess", time_s=240.0, probe=False, reduce=True, reduce_s=60, oracle="grad",
                        max_tests=1, rerun=False,
                        policy=GenPolicy(max_nodes=5, dtypes=["float32"], include=["Add", "Mul", "Tanh", "Sigmoid"], seed=3))
    counters = run_campaign(cc)
    assert counters.verdicts["inconsistency"] == 1 and counters.nnfuzz_errors == 0, counters
    meta = json.loads((tmp_path / "bugs" / "0000" / "meta.json").read_text())
    assert meta["reduced"]["nodes_after"] < meta["reduced"]["nodes_before"], meta["reduced"]
    assert meta["signature"] == "wrongxla-cpu | inconsistency | backward | values"


def test_a_campaign_signs_tf_eagers_backward_crash_as_repro_does_and_knows_it_kept(tmp_path):
    """The expected side's crash is signed in the part its run failed in: a 30-minute xla-cpu campaign saved TF
    eager's 5-D pool gradient crash (bugs/kept/0075) without the ``backward`` term, so it neither matched the
    kept bug nor repro's signature of its own folder. One MaxPool3d: known, as 0075."""
    from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
    from nnfuzz.generate.policy import GenPolicy
    from nnfuzz.fuzz.runlog import read_log

    cc = CampaignConfig(backend="xla-cpu", backend_options={}, out=tmp_path / "bugs", ui="plain", executor="inprocess",
                        time_s=180.0, probe=False, reduce=False, oracle="grad", max_tests=2, steer_known=False,
                        keep_per_signature=0,
                        policy=GenPolicy(max_nodes=1, dtypes=["float32"], include=["MaxPool3d"], seed=3))
    counters = run_campaign(cc)
    assert counters.nnfuzz_errors == 0 and counters.known_hits >= 1 and counters.new_root_causes == 0, counters
    signed = {r.get("signature") for r in read_log(tmp_path / "bugs") if r.get("signature")}
    assert signed == {"tf-cpu | crash | execute | backward | AttributeError | <name> object has no attribute <name>"}


def test_a_gradient_that_cancels_whole_is_judged_by_the_references_own_error(tmp_path):
    """tests/cases/xla-grad-f16-cancellation: d/dx of DivNoNan(v, v) in float16 is 0 everywhere, computed as
    up/v - up*v/v^2 from terms near 70; eager is itself 0.031 from the float64 truth and XLA -0.012 where eager
    has 0, which the tolerance (scaled by the gradient's largest entry, ~0) called a bug. The reference's own
    distance from its twin now bounds the noise: repro says it does not reproduce."""
    import shutil
    from pathlib import Path

    from nnfuzz.cli import main

    folder = tmp_path / "0000"
    shutil.copytree(Path(__file__).parents[1] / "cases" / "xla-grad-f16-cancellation", folder)
    assert main(["repro", str(folder)]) == 1
