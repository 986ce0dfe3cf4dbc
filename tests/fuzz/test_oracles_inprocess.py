"""The oracles' campaign paths on the in-process executor (``fuzz.executor=inprocess``) with the test
tier's fake backends (tests/fuzz/fake_backends.py): the metamorphic oracle catches a system wrong only on
the rewritten model (and the pair replays), disruptive mode (mgen.invalid) saves a crash on an invalid
model, nothing for a clean rejection, and a silent acceptance only when the outputs contradict the
declared types; the compare oracles (cmp, optlevel) run the other side on each lane's expected-side
sandbox and save the other system's crash under its name; a system taking nnfuzz graphs is sent no
ONNX. test_noref_oracles.py runs the metamorphic and invalid cases on real worker processes."""
import numpy as np
import pytest
from fake_backends import SAFE_OPS, fake_campaign, folders, records

from nnfuzz.fuzz.inprocess import InProcessSandbox
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.triage.bugstore import REWRITE_FILE, load_bug
from nnfuzz.triage.repro import REPRODUCED, replay
from nnfuzz.verdict import DEFAULT_TOLERANCES

INVALID = GenPolicy(max_nodes=4, dtypes=["float32"], include=SAFE_OPS, invalid=1.0, seed=1)


def test_a_system_wrong_only_on_the_rewrite_is_caught_and_the_pair_replays(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", backend="FakeRewriteWrongBackend", oracle="metamorphic",
                                 rewrites=("function",), max_tests=3)
    assert counters.tests == 3 and counters.verdicts == {"inconsistency": 3}, counters
    bug = load_bug(folders(cc.out)[0])
    assert (bug.path / REWRITE_FILE).is_file() and bug.rewrite_bytes is not None
    assert bug.meta.oracle["kind"] == "metamorphic" and bug.meta.rewrite["failed"] == "pair"
    assert bug.meta.oracle["expected"]["model"] == REWRITE_FILE
    assert bug.meta.rewrite["steps"] and all(s["kind"] == "function" for s in bug.meta.rewrite["steps"])
    assert "rewrite function" in bug.meta.signature and bug.meta.first_divergent_node is None
    assert bug.oracle["output"] is not None  # the original model's outputs on the same system
    wrong = InProcessSandbox("fake-cpu", backend_path="fake_backends:FakeRewriteWrongBackend")
    assert replay(bug, wrong, DEFAULT_TOLERANCES).outcome == REPRODUCED
    right = InProcessSandbox("fake-cpu", backend_path="fake_backends:FakeBackend")
    assert replay(bug, right, DEFAULT_TOLERANCES, same_system=False).outcome != REPRODUCED


def test_a_system_right_on_both_models_passes_the_metamorphic_oracle(tmp_path):
    # every rewrite kind but loop: ONNX's reference evaluator, which the fake backend computes with, fails
    # on some Loop rewrites of a Transpose (ValueError: need at least one array to concatenate)
    kinds = ("extra-output", "fan-out", "function", "function-chain", "if", "reorder", "respell")
    counters, cc = fake_campaign(tmp_path / "bugs", oracle="metamorphic", rewrites=kinds, max_tests=6)
    assert counters.tests == 6 and counters.verdicts == {"pass": 6} and not folders(cc.out), counters
    tested = [r for r in records(cc.out) if r.get("verdict") == "pass"]
    assert all(r["rewrite"] for r in tested)  # each test ran a rewritten twin


def test_a_crash_on_an_invalid_model_is_saved_as_a_crash(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"on_invalid": "crash"}, backend="FakeInvalidBackend",
                                 policy=INVALID, max_tests=2, rerun=False)
    assert counters.verdicts == {"crash": 2}, counters
    bug = load_bug(folders(cc.out)[0])  # model.onnx is invalid on purpose: loaded without the checker
    assert bug.meta.symptom == "crash" and bug.meta.signal == 11
    assert bug.meta.invalid["rule"] in ("dtype", "rank", "shape", "attribute", "missing-input")
    assert bug.meta.oracle["kind"] == "invalid" and bug.meta.invalid["node"] in bug.meta.invalid["checker"]
    assert sum(counters.invalid.values()) == 2 and all(k.endswith(": crash") for k in counters.invalid)


def test_a_clean_rejection_of_an_invalid_model_saves_nothing(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"on_invalid": "reject"}, backend="FakeInvalidBackend",
                                 policy=INVALID, max_tests=4)
    assert counters.tests == 4 and counters.bugs_saved == 0, counters
    assert sum(counters.invalid.values()) == 4 and all(k.endswith(": rejected") for k in counters.invalid)
    assert sum("invalid" in r for r in records(cc.out)) == 4


def test_silent_acceptance_is_saved_only_when_outputs_contradict_the_declared_types(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"on_invalid": "accept-wrong-type"},
                                 backend="FakeInvalidBackend", policy=INVALID, max_tests=2, rerun=False)
    assert counters.verdicts == {"inconsistency": 2}, counters
    bug = load_bug(folders(cc.out)[0])
    assert "accepted an invalid model" in bug.meta.summary and "declared float32" in bug.meta.summary
    assert bug.meta.signature.startswith(f"fake-cpu | inconsistency | invalid {bug.meta.invalid['rule']}")


@pytest.mark.parametrize("fault, verdict", [(None, "pass"), ("wrong", "inconsistency")])
def test_a_system_taking_nnfuzz_graphs_is_sent_graphs(tmp_path, fault, verdict):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": fault} if fault else {}, backend="FakeGirBackend",
                                 max_tests=3, rerun=False)
    assert counters.verdicts == {verdict: 3} and counters.formats == {"gir": 3}, counters
    for p in folders(cc.out):
        bug = load_bug(p)
        assert bug.meta.format == "gir" and bug.meta.system == "fakegir-cpu" and not (p / "model.onnx").exists()


def test_cmp_saves_a_disagreement_with_the_other_systems_outputs(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "wrong"}, cmp_with="fake_backends:FakeGirBackend",
                                 max_tests=4, workers=2, rerun=False)
    assert counters.tests == 4 and counters.verdicts == {"inconsistency": 4}, counters
    bug = load_bug(folders(cc.out)[0])
    assert bug.meta.system == "fake-cpu" and bug.meta.oracle["kind"] == "cmp" and bug.meta.oracle["side"] == "actual"
    assert bug.meta.oracle["expected"]["system"] == "fake_backends:FakeGirBackend"
    assert bug.meta.oracle["expected"]["version"] == "1.0-fake"
    # oracle.pkl's expected outputs are the other system's: nnfuzz's numpy reference on the saved model
    from nnfuzz.gir import GraphIR
    from nnfuzz.reference import evaluate
    from nnfuzz.triage.bugstore import bug_weights

    gir = GraphIR.loads(bug.gir_text)
    values = evaluate(gir, bug_weights(bug), bug.oracle["input"])
    assert bug.oracle["output"].keys() == set(gir.outputs)
    assert all(np.array_equal(bug.oracle["output"][k], values[k]) for k in gir.outputs)


def test_cmp_saves_the_other_systems_crash_under_its_name_and_ignores_what_it_cannot_run(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", cmp_with="fake_backends:FakeCrashBackend", max_tests=2,
                                 rerun=False)
    assert counters.verdicts == {"crash": 2} and counters.bugs_saved == 2, counters
    meta = load_bug(folders(cc.out)[0]).meta
    assert meta.system == "fake_backends:FakeCrashBackend" and meta.oracle["side"] == "expected"
    assert meta.symptom == "crash" and meta.summary == "killed by SIGSEGV"
    counters, cc = fake_campaign(tmp_path / "unsupported", cmp_with="fake_backends:FakeUnsupportedBackend",
                                 max_tests=2)
    assert counters.verdicts == {"unsupported": 2} and counters.bugs_saved == 0, counters


def test_the_other_systems_crash_records_its_signal(tmp_path):
    fake_campaign(tmp_path / "bugs", cmp_with="fake_backends:FakeCrashBackend", max_tests=1, rerun=False)
    assert load_bug(tmp_path / "bugs" / "0000").meta.signal == 11


def test_optlevel_compares_with_the_same_system_without_its_optimisations(tmp_path):
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "wrong"}, by_path=True, oracle="optlevel",
                                 max_tests=2, rerun=False)
    assert counters.verdicts == {"inconsistency": 2}, counters
    meta = load_bug(folders(cc.out)[0]).meta
    assert meta.oracle["kind"] == "optlevel" and meta.oracle["expected"]["options"] == {"always": None}
    assert meta.system == meta.oracle["expected"]["system"] == "fake_backends:FakeBackend"


def test_the_rewrite_probe_leaves_out_what_the_system_cannot_read(tmp_path, monkeypatch):
    """A system that rejects model-local functions as unsupported is not given function rewrites."""
    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    counters, cc = fake_campaign(tmp_path / "bugs", backend="FakeNoFunctionsBackend", oracle="metamorphic",
                                 probe=True, max_tests=4)
    [oracle] = records(cc.out)[0]["campaign"]["plan"]["oracles"]
    assert oracle["kind"] == "metamorphic" and {"if", "loop", "reorder"} <= set(oracle["rewrites"])
    assert "function" not in oracle["rewrites"] and "function-chain" not in oracle["rewrites"]
    drawn = [k for r in records(cc.out) if isinstance(r.get("rewrite"), list) for k in r["rewrite"]]
    assert counters.tests == 4 and drawn and not [k for k in drawn if k.startswith("function")]
