"""oracle=grad (nnfuzz/oracles/grad.py) on the test tier: the inductor backend's gradient path run with torch
eager (tests/fuzz/grad_backends.py), in the test's process. A backward made wrong on purpose (a custom
autograd function that doubles the gradient) is saved with a ``backward`` signature, replayed and reduced
with it; the same graphs with the right backward pass."""
import json

import numpy as np
import pytest
from fake_backends import SAFE_OPS, folders
from graphs import chain

from nnfuzz.abstract import DType
from nnfuzz.errors import ConfigError
from nnfuzz.materialize.torch import grad
from nnfuzz.ops.elementwise.spec import Floor, Tanh
from nnfuzz.ops.select.spec import Cast
from nnfuzz.triage.bugstore import load_bug


def grad_campaign(out, backend, **kw):
    from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
    from nnfuzz.generate.policy import GenPolicy

    import grad_backends

    cls = getattr(grad_backends, backend)
    kw.setdefault("policy", GenPolicy(max_nodes=4, dtypes=["float32"], include=SAFE_OPS, seed=1))
    kw.setdefault("time_s", 60.0)
    kw.setdefault("oracle", "grad")
    cc = CampaignConfig(backend=cls.name, backend_options={}, backend_path=f"grad_backends:{backend}", out=out,
                        ui="plain", executor="inprocess", probe=False, reduce=False, **kw)
    return run_campaign(cc), cc


def sandbox(backend):
    from nnfuzz.fuzz.inprocess import InProcessSandbox

    import grad_backends

    return InProcessSandbox(getattr(grad_backends, backend).name, {}, backend_path=f"grad_backends:{backend}")


def test_a_wrong_backward_is_saved_with_a_backward_signature_and_replays(tmp_path):
    from nnfuzz.triage.repro import REPRODUCED, replay
    from nnfuzz.verdict import DEFAULT_TOLERANCES

    out = tmp_path / "bugs"
    counters, cc = grad_campaign(out, "WrongGradBackend", max_tests=2, rerun=False)
    assert counters.tests == 2 and counters.verdicts["inconsistency"] == 2 and counters.bugs_saved == 2, counters
    bug = load_bug(folders(out)[0])
    m = bug.meta
    assert m.signature == "wronggrad-cpu | inconsistency | backward | values", m.signature
    assert m.grad["failed"] == "backward" and m.oracle["kind"] == "grad" and m.schema >= 7
    assert m.summary.startswith("grad:") and m.float64_twin["available"] is True
    assert m.localization_note.startswith("the forward outputs match torch eager")
    # oracle.pkl: the upstream gradients among the inputs, eager's gradients among the outputs, with twins
    assert set(m.grad["upstream"]) <= set(bug.oracle["input"]) and m.grad["upstream"]
    assert set(m.grad["gradients"]) <= set(bug.oracle["output"]) <= set(bug.oracle["output_f64"])
    gir = json.loads((folders(out)[0] / "gir.json").read_text())
    assert set(m.grad["wrt"]) <= set(gir["inputs"]) | set(gir["weights"])
    with sandbox("WrongGradBackend") as sb:
        again = replay(bug, sb, DEFAULT_TOLERANCES)
    assert again.outcome == REPRODUCED and again.signature == m.signature, again
    with sandbox("EagerGradBackend") as sb:  # the right backward: the folder does not reproduce there
        right = replay(bug, sb, DEFAULT_TOLERANCES, same_system=False)
    assert not right.verdict.is_bug, right.verdict


def test_the_same_graphs_with_the_right_backward_pass(tmp_path):
    counters, _ = grad_campaign(tmp_path / "bugs", "EagerGradBackend", max_tests=6, rerun=False)
    assert counters.tests == 6 and counters.verdicts["pass"] == 6 and counters.bugs_saved == 0, counters
    assert counters.no_gradient == 0


def test_reduction_keeps_the_backward_signature(tmp_path):
    from nnfuzz.triage.bug_reduction import reduce_bug
    from nnfuzz.verdict import DEFAULT_TOLERANCES

    out = tmp_path / "bugs"
    grad_campaign(out, "WrongGradBackend", max_tests=3, rerun=False)
    path = max(folders(out), key=lambda f: load_bug(f).meta.nodes)
    before = load_bug(path)
    with sandbox("WrongGradBackend") as sb:
        summary = reduce_bug(before, sb, DEFAULT_TOLERANCES, 30.0)
    after = load_bug(path)
    assert summary["status"] in ("reduced", "minimal"), summary
    if summary["status"] == "reduced":
        assert after.meta.nodes < before.meta.nodes
    assert after.meta.grad["failed"] == "backward"
    assert after.meta.signature == before.meta.signature == "wronggrad-cpu | inconsistency | backward | values"
    from nnfuzz.materialize.portable import grad_spec

    assert grad_spec(after.model_bytes).wrt == tuple(after.meta.grad["wrt"])  # the reduced folder's payload


def test_a_graph_without_a_differentiable_path_is_skipped_not_an_error(tmp_path):
    from nnfuzz.generate.policy import GenPolicy

    policy = GenPolicy(max_nodes=3, dtypes=["int32"], include=["Add", "Mul", "Sub"], seed=1)
    counters, _ = grad_campaign(tmp_path / "bugs", "WrongGradBackend", time_s=2.0, policy=policy)
    assert counters.tests == 0 and counters.no_gradient >= 3 and counters.bugs_saved == 0, counters
    assert not counters.nnfuzz_errors, counters.last_error


def test_autograd_cuts_integer_paths():
    """x -> Floor -> Cast(int32): no gradient reaches the output; x -> Tanh: the input's gradient."""
    x = {"x": np.linspace(-1, 1, 6, dtype=np.float32)}
    spec, _, _ = grad.eager(chain(Floor(), Cast(to=DType.int32)), {}, x, seed=3)
    assert spec is None
    spec, upstream, values = grad.eager(chain(Tanh()), {}, x, seed=3)
    assert spec.outputs == ("v0",) and spec.wrt == ("x",) and list(upstream) == ["upstream:v0"]
    u = upstream["upstream:v0"]
    np.testing.assert_allclose(values["grad:x"], u * (1 - np.tanh(x["x"]) ** 2), rtol=1e-5)
    again = grad.eager(chain(Tanh()), {}, x, seed=3)[1]["upstream:v0"]
    assert np.array_equal(u, again) and not np.array_equal(u, grad.eager(chain(Tanh()), {}, x, seed=4)[1]["upstream:v0"])


def test_gradient_tolerances_scale_with_the_largest_entry():
    base = {"float32": (1e-3, 1e-4)}
    tol = grad.tolerances(base, {"v0": np.ones(2, np.float32), "grad:x": np.array([300.0, -2.0], np.float32),
                                 "grad:w": np.array([0.5], np.float32)})
    assert tol["grad:x"] == (1e-3, pytest.approx(3e-2)) and tol["grad:w"] == (1e-3, 1e-4) and "v0" not in tol


def test_oracle_grad_needs_a_backend_that_runs_gradients(tmp_path):
    from nnfuzz.fuzz.campaign import CampaignConfig
    from nnfuzz.generate.policy import GenPolicy
    from nnfuzz.oracles import campaign_oracles

    cc = CampaignConfig(backend="ort-cpu", backend_options={}, policy=GenPolicy(), time_s=1, out=tmp_path, oracle="grad")
    with pytest.raises(ConfigError, match=r"oracle=grad: ort-cpu does not run gradient tests; backends that do: .*inductor-cpu.*xla-cpu"):
        campaign_oracles(cc)


def test_training_mode_batch_norm_is_generated_for_gradients_and_its_running_statistics_compared(tmp_path):
    """oracle=grad turns on the "training" dialect: BatchNormTraining graphs, whose running mean and
    variance are outputs compared like the others (and differentiated: the update is a function of x)."""
    from nnfuzz.generate.policy import GenPolicy
    from fake_backends import records

    out = tmp_path / "bugs"
    policy = GenPolicy(max_nodes=3, dtypes=["float32"], include=["norm", "Tanh", "Add"], seed=2)
    counters, _ = grad_campaign(out, "EagerGradBackend", max_tests=6, policy=policy, rerun=False)
    assert counters.tests == 6 and counters.verdicts["pass"] == 6, counters
    ops = [op for r in records(out) if r.get("verdict") == "pass" for op in r.get("ops", [])]
    assert "BatchNormTraining" in ops, ops
    counters, _ = grad_campaign(tmp_path / "wrong", "WrongGradBackend", max_tests=2, policy=policy, rerun=False)
    assert counters.verdicts["inconsistency"] == 2


def test_a_gradient_test_may_take_three_times_the_test_timeout(tmp_path):
    """A forward and a backward graph to compile: 2 s of compile within fuzz.test_timeout=1 is no hang
    (nor a slow run) for oracle=grad, where oracle=reference confirms it as slow."""
    counters, _ = grad_campaign(tmp_path / "grad", "SlowGradBackend", max_tests=2, test_timeout=1.0)
    assert counters.verdicts["pass"] == 2 and counters.slow == 0 and counters.bugs_saved == 0, counters
    counters, _ = grad_campaign(tmp_path / "ref", "SlowGradBackend", max_tests=2, test_timeout=1.0, oracle="reference")
    assert counters.slow == 2, counters


def test_an_op_tf_has_no_gradient_for_is_unsupported_not_a_bug():
    """TF registers no gradient for TruncateMod (nnfuzz's Fmod), torch has one: xla-cpu and tf-cpu say so."""
    from nnfuzz.backends.known import classify

    for engine in ("xla", "tf"):
        known = classify(engine, "LookupError: gradient registry has no entry for: TruncateMod")
        assert known is not None and known.kind == "unsupported" and "no gradient" in known.note


def test_a_malformed_gradient_record_is_a_malformed_folder(tmp_path):
    import shutil

    from nnfuzz.materialize.portable import pack, unpack
    from nnfuzz.triage.folder import BugFolderError

    out = tmp_path / "bugs"
    grad_campaign(out, "WrongGradBackend", max_tests=1, rerun=False)
    folder = tmp_path / "bad"
    shutil.copytree(folders(out)[0], folder)
    gir, weights = unpack((folder / "model.gir").read_bytes())
    (folder / "model.gir").write_bytes(pack(gir.dumps(), weights, None, {"outputs": "v0"}))
    with pytest.raises(BugFolderError, match="malformed gradient record"):
        load_bug(folder)


def test_a_crash_says_whether_the_forward_or_the_backward_failed(tmp_path):
    """One message raised in the forward and in the backward: two root causes, the backward's signed so; a
    death by signal in the backward too. meta.json's grad.failed names the part in each."""
    from grad_backends import FAULT

    saved = {}
    for backend in ("ForwardRaisesBackend", "BackwardRaisesBackend", "BackwardDiesBackend"):
        out = tmp_path / backend
        counters, _ = grad_campaign(out, backend, max_tests=1, rerun=False)
        assert counters.verdicts["crash"] == 1 and counters.bugs_saved == 1, counters
        saved[backend] = load_bug(folders(out)[0]).meta
    fwd, bwd, died = saved["ForwardRaisesBackend"], saved["BackwardRaisesBackend"], saved["BackwardDiesBackend"]
    assert FAULT in fwd.summary and FAULT in bwd.summary and fwd.stage == bwd.stage == "compile"
    assert fwd.grad["failed"] == "forward" and bwd.grad["failed"] == "backward" and died.grad["failed"] == "backward"
    assert fwd.signature.startswith("fwdraises-cpu | crash | compile | RuntimeError | "), fwd.signature
    assert bwd.signature.startswith("bwdraises-cpu | crash | compile | backward | RuntimeError | "), bwd.signature
    assert fwd.signature.split(" | RuntimeError | ")[1] == bwd.signature.split(" | RuntimeError | ")[1]
    assert died.signature.startswith("bwddies-cpu | crash | compile | backward | ") and died.signal == 11, died.signature


def test_a_replayed_backward_crash_keeps_its_part(tmp_path):
    from nnfuzz.triage.repro import REPRODUCED, replay
    from nnfuzz.verdict import DEFAULT_TOLERANCES

    out = tmp_path / "bugs"
    grad_campaign(out, "BackwardRaisesBackend", max_tests=1, rerun=False)
    bug = load_bug(folders(out)[0])
    with sandbox("BackwardRaisesBackend") as sb:
        again = replay(bug, sb, DEFAULT_TOLERANCES)
    assert again.outcome == REPRODUCED and again.signature == bug.meta.signature, again
    assert " | backward | " in again.signature


@pytest.mark.slow
def test_a_worker_process_reports_the_part_it_raised_or_died_in():
    """The worker's "part" messages (fuzz/worker.py): an exception's answer and a death by signal both carry it."""
    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.materialize.portable import pack

    gir = chain(Tanh())
    x = {"x": np.linspace(-1, 1, 6, dtype=np.float32)}
    spec, upstream, _ = grad.eager(gir, {}, x, seed=3)
    payload = pack(gir.dumps(), {}, None, spec.to_json())
    for backend, status, part in (("ForwardRaisesBackend", "error", "forward"),
                                  ("BackwardRaisesBackend", "error", "backward"),
                                  ("BackwardSegfaultsBackend", "crash", "backward")):
        with Sandbox("grad", backend_path=f"grad_backends:{backend}", test_timeout=60.0) as sb:
            res = sb.run(payload, {**x, **upstream})
        assert (res.status, res.stage, res.part) == (status, "compile", part), (res.status, res.part, res.error)
        if status == "crash":
            assert res.signal == 11


def test_a_maxpool_window_of_equal_values_gets_values_that_do_not_tie_and_passes():
    """Start values tied in every MaxPool window (where the gradient goes is then each system's tie rule)
    are moved a margin apart by the search under oracle=grad (search.kinks), and the test passes."""
    from grad_check import judged_grad, tied_maxpool, window_gaps

    from nnfuzz.materialize.torch.kinks import KINK_MARGIN

    assert np.all(window_gaps(tied_maxpool(kinks=False).oracle.input["x"]) == 0)  # no kinks asked: kept tied
    model = tied_maxpool(kinks=True)
    x = model.oracle.input["x"]
    assert np.all(window_gaps(x) >= KINK_MARGIN[DType.float32] * (1 + 2 * np.abs(x).max()) * 0.99), window_gaps(x)
    with sandbox("EagerGradBackend") as sb:
        assert judged_grad(model, sb, seed=3).verdict.label == "pass"
