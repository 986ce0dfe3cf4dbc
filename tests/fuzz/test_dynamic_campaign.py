"""Dynamic shapes in a campaign (fuzz.dynamic, nnfuzz/oracles/dynamic.py): on real ONNX Runtime every dynamic
test compiles once and runs its shapes, the summary's tests per compile counts them; a system wrong only on
a later shape of one compiled model is caught at that shape, and the bug records the shape family."""
import pytest
from fake_backends import fake_campaign, folders, records

from nnfuzz.errors import ConfigError
from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.oracles.base import campaign_oracles
from nnfuzz.triage.bugstore import load_bug

pytestmark = pytest.mark.slow

SIMPLE = ["Add", "Mul", "Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "ReduceSum", "Softmax", "Concat"]


def test_ort_runs_each_dynamic_test_at_every_shape_with_one_compile(tmp_path):
    pytest.importorskip("onnxruntime")
    policy = GenPolicy(max_nodes=4, dtypes=["float32"], include=SIMPLE, seed=3)
    cc = CampaignConfig(backend="ort-cpu", backend_options={}, policy=policy, time_s=60.0, out=tmp_path / "bugs",
                        ui="plain", executor="inprocess", probe=False, reduce=False, max_tests=8, dynamic=1.0)
    c = run_campaign(cc)
    assert c.tests == 8 and c.dynamic >= 3, c
    assert c.dynamic_compiles == c.dynamic  # one compile each
    assert c.dynamic_runs >= 2 * c.dynamic and c.runs_per_compile() > 1.5
    dyn = [r for r in records(cc.out) if r.get("dynamic", {}).get("onnx") == "dynamic"]
    assert len(dyn) == c.dynamic and all(r["dynamic"]["shapes"] >= 2 for r in dyn)
    assert c.verdicts["pass"] == 8


@pytest.mark.parametrize("backend", ["xla-cpu", "tflite-cpu"])
def test_tf_systems_run_the_none_dims_function_at_every_shape_against_tf_eager(backend, tmp_path):
    """xla-cpu and tflite-cpu, whose reference is tf-cpu (TF eager): both sides run the dynamic model at
    every shape; XLA counts one compile per shape, TFLite one conversion per test."""
    pytest.importorskip("ai_edge_litert.interpreter" if backend == "tflite-cpu" else "tensorflow")
    policy = GenPolicy(max_nodes=4, dtypes=["float32"], include=SIMPLE, seed=3)
    cc = CampaignConfig(backend=backend, backend_options={}, policy=policy, time_s=120.0, out=tmp_path / "bugs",
                        ui="plain", executor="inprocess", probe=False, reduce=False, max_tests=6, dynamic=1.0)
    c = run_campaign(cc)
    assert c.tests == 6 and c.dynamic >= 2, c
    assert c.dynamic_runs >= 2 * c.dynamic
    # XLA: one compile per shape (shape 0's first call included); TFLite: converted once, resized per shape
    assert c.dynamic_compiles == (c.dynamic_runs if backend == "xla-cpu" else c.dynamic)
    dyn = [r for r in records(cc.out) if r.get("dynamic", {}).get("tf") == "dynamic"]
    assert len(dyn) == c.dynamic and all(r["dynamic"]["shapes"] >= 2 for r in dyn)
    assert c.verdicts["pass"] == 6 and not folders(cc.out), c


def test_tvm_relax_native_models_run_every_shape_with_one_compile(tmp_path):
    """tvm-cpu with backend.options.format=relax: the Relax-native models are built with symbolic shape vars,
    compiled once, run at every shape against torch eager."""
    pytest.importorskip("tvm")
    policy = GenPolicy(max_nodes=4, dtypes=["float32"], include=SIMPLE, seed=3)
    cc = CampaignConfig(backend="tvm-cpu", backend_options={"format": "relax"}, policy=policy, time_s=180.0,
                        out=tmp_path / "bugs", ui="plain", executor="inprocess", probe=False, reduce=False,
                        max_tests=4, dynamic=1.0)
    c = run_campaign(cc)
    assert c.tests == 4 and c.dynamic >= 2, c
    assert c.dynamic_compiles == c.dynamic and c.dynamic_runs >= 2 * c.dynamic
    dyn = [r for r in records(cc.out) if r.get("dynamic", {}).get("relax") == "dynamic" and r.get("format") == "relax"]
    assert len(dyn) == c.dynamic
    assert c.verdicts["pass"] == 4 and not folders(cc.out), c


def test_a_system_wrong_on_a_later_shape_is_caught_there(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", backend="FakeStaleShapeBackend", seed=5, max_tests=6,
                                 dynamic=1.0, rerun=False)
    assert counters.dynamic >= 1 and counters.verdicts["inconsistency"] == counters.dynamic, counters
    assert counters.verdicts["pass"] == counters.tests - counters.dynamic  # its static tests run once: right
    bug = load_bug(folders(cc.out)[0])
    dyn = bug.meta.dynamic
    assert dyn["shape"] == 1 and dyn["compiles"] == 1 and len(dyn["assignments"]) >= 2
    assert dyn["static"] == "passes"  # shape 1's static model, compiled alone, inferred twice at its one shape: right
    assert "| dynamic |" in bug.meta.signature
    want = {i: [d if s is None else dyn["assignments"][1][s] for d, s in zip(bug.oracle["input"][i].shape, axes)]
            for i, axes in dyn["dims"].items()}
    assert {i: list(bug.oracle["input"][i].shape) for i in want} == want  # oracle.pkl holds shape 1's values
    import onnx

    graph = onnx.load_model_from_string(bug.model_bytes).graph
    assert any(d.dim_param for i in graph.input for d in i.type.tensor_type.shape.dim)


def test_a_recompile_no_guard_asks_for_is_a_bug_of_its_own(tmp_path):
    """Every value right, but the system compiled again at shape 1 where no guard asks it to: an
    inconsistency at that shape, signed "recompile" (no static check: a static model does not recompile)."""
    counters, cc = fake_campaign(tmp_path / "bugs", backend="FakeRecompilingBackend", seed=5, max_tests=4,
                                 dynamic=1.0, rerun=False)
    assert counters.dynamic >= 1 and counters.verdicts["inconsistency"] == counters.dynamic, counters
    bug = load_bug(folders(cc.out)[0])
    dyn = bug.meta.dynamic
    assert dyn["shape"] == 1 and dyn["compiles"] == 2 and dyn["static"] is None
    assert dyn["unguarded"]["why"] == bug.meta.summary and bug.meta.summary.startswith("recompiled for sizes")
    assert bug.meta.signature == "fake-cpu | inconsistency | recompile | recompile"


def test_a_dynamic_test_has_each_shapes_time(tmp_path):
    """Each shape's run takes 0.6 s of a 1 s timeout: a dynamic test of 3 or more shapes is within its time
    (one timeout per shape: a later shape may compile again), not a timeout rescued as slow."""
    counters, _ = fake_campaign(tmp_path / "bugs", {"always": "slow@execute", "slow_s": 0.6},
                                backend="FakeDynamicBackend", seed=5, max_tests=4, dynamic=1.0, test_timeout=1.0)
    assert counters.dynamic >= 1 and counters.verdicts == {"pass": 4} and counters.slow == 0, counters


def test_fuzz_dynamic_is_checked_against_the_system_and_the_oracle(tmp_path):
    base = dict(backend="tf-cpu", backend_options={}, policy=GenPolicy(seed=1), time_s=1.0, out=tmp_path)
    assert not any(o.name == "dynamic" for o in campaign_oracles(CampaignConfig(**base)))  # auto: off there
    with pytest.raises(ConfigError, match="takes no dynamic model"):  # (TF eager: no symbolic form)
        campaign_oracles(CampaignConfig(**base, dynamic=0.5))
    xla = {**base, "backend": "xla-cpu"}  # a dynamic form, but XLA compiles per shape: auto gives no share
    assert not any(o.name == "dynamic" for o in campaign_oracles(CampaignConfig(**xla)))
    assert [o.forms for o in campaign_oracles(CampaignConfig(**xla, dynamic=0.5)) if o.name == "dynamic"] == [("tf",)]
    tflite = {**base, "backend": "tflite-cpu"}  # converted once with None dims: auto's share
    assert [o.share for o in campaign_oracles(CampaignConfig(**tflite)) if o.name == "dynamic"] == [0.5]
    tvm = {**base, "backend": "tvm-cpu", "backend_options": {"format": "onnx"}}  # the forms of the formats sent
    assert [o.forms for o in campaign_oracles(CampaignConfig(**tvm)) if o.name == "dynamic"] == [("onnx",)]
    ort = {**base, "backend": "ort-cpu"}
    assert [o.name for o in campaign_oracles(CampaignConfig(**ort))] == ["dynamic", "reference"]
    with pytest.raises(ConfigError, match="goes with oracle=reference"):
        campaign_oracles(CampaignConfig(**ort, oracle="optlevel", dynamic=0.5))
    assert [o.name for o in campaign_oracles(CampaignConfig(**ort, oracle="optlevel"))] == ["optlevel"]


def test_a_system_wrong_on_every_model_is_not_signed_dynamic(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "wrong"}, backend="FakeDynamicBackend", seed=5,
                                 max_tests=4, dynamic=1.0, rerun=False)
    assert counters.dynamic >= 1 and counters.verdicts["inconsistency"] == 4, counters
    dyn = [m for m in (load_bug(f).meta for f in folders(cc.out)) if m.dynamic is not None]
    assert dyn and all(m.dynamic["shape"] == 0 and m.dynamic["static"] == "fails (inconsistency)" for m in dyn)
    assert all("| dynamic |" not in m.signature for m in dyn)


def test_the_replay_of_a_dynamic_bug_runs_every_shape(tmp_path):
    from nnfuzz.fuzz.inprocess import InProcessSandbox
    from nnfuzz.triage.repro import NOT_REPRODUCED, REPRODUCED, replay
    from nnfuzz.verdict import DEFAULT_TOLERANCES

    _, cc = fake_campaign(tmp_path / "bugs", backend="FakeStaleShapeBackend", seed=5, max_tests=3, dynamic=1.0,
                          rerun=False)
    bug = load_bug(folders(cc.out)[0])
    assert len(bug.oracle["shapes"]) == len(bug.meta.dynamic["assignments"])
    stale = InProcessSandbox("fake-cpu", backend_path="fake_backends:FakeStaleShapeBackend")
    assert replay(bug, stale, DEFAULT_TOLERANCES).outcome == REPRODUCED  # only a replay of every shape shows it
    right = InProcessSandbox("fake-cpu", backend_path="fake_backends:FakeBackend")
    assert replay(bug, right, DEFAULT_TOLERANCES, same_system=False).outcome == NOT_REPRODUCED
    from nnfuzz.triage.bug_reduction import reduce_bug

    got = reduce_bug(bug, stale, DEFAULT_TOLERANCES, 30.0)  # with its shape family (tests/fuzz/test_dynamic_reduce.py)
    assert got["status"] in ("reduced", "minimal"), got
    small = load_bug(bug.path)
    assert small.meta.dynamic["shape"] >= 1 and len(small.oracle["shapes"]) == len(bug.oracle["shapes"])
    assert replay(small, stale, DEFAULT_TOLERANCES).outcome == REPRODUCED


def test_oracle_static_compares_the_dynamic_compile_with_static_ones(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", backend="FakeStaleShapeBackend", seed=5, max_tests=4,
                                 oracle="static", rerun=False)
    assert counters.dynamic >= 1 and counters.dynamic + counters.not_dynamic >= 4, counters
    assert counters.verdicts["inconsistency"] == counters.dynamic  # each dynamic run is stale from shape 1 on
    bug = load_bug(folders(cc.out)[0])
    assert bug.meta.oracle["kind"] == "static" and bug.meta.dynamic["shape"] == 1
    assert bug.meta.dynamic["failed"] == "dynamic" and "| dynamic vs static |" in bug.meta.signature


def test_oracle_static_on_ort_passes(tmp_path):
    pytest.importorskip("onnxruntime")
    policy = GenPolicy(max_nodes=4, dtypes=["float32"], include=SIMPLE, seed=3)
    cc = CampaignConfig(backend="ort-cpu", backend_options={}, policy=policy, time_s=60.0, out=tmp_path / "bugs",
                        ui="plain", executor="inprocess", probe=False, reduce=False, max_tests=5, oracle="static")
    c = run_campaign(cc)
    assert c.dynamic >= 2 and c.verdicts["pass"] == c.dynamic and not folders(cc.out), c
