"""The oracles that need no reference (docs/oracles.md), with faults injected by the test backend
(tests/fuzz/fault_backend.py): the metamorphic oracle catches a system that is wrong only on the
rewritten model and replays the pair; disruptive mode (mgen.invalid) saves a system that segfaults on
an invalid model as a crash, saves nothing when it rejects cleanly, and saves a silent acceptance only
when the outputs contradict the declared types. The slow smoke campaigns run the real systems."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from nnfuzz.cli import main
from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
from nnfuzz.fuzz.sandbox import Sandbox
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.triage.bugstore import REWRITE_FILE, load_bug
from nnfuzz.triage.folder import BugFolderError
from nnfuzz.triage.repro import REPRODUCED, replay
from nnfuzz.verdict import DEFAULT_TOLERANCES
from nnfuzz.fuzz.runlog import read_log

HERE = Path(__file__).parent
SAFE_OPS = ["Relu", "Add", "Mul", "Sigmoid", "Tanh", "Transpose"]


def _campaign(tmp_path, backend_path, options=None, **kw):
    sys.path.insert(0, str(HERE))
    kw.setdefault("policy", GenPolicy(max_nodes=4, dtypes=["float32"], include=SAFE_OPS))
    cc = CampaignConfig(backend="fault-cpu", backend_options=options or {}, backend_path=backend_path,
                        out=tmp_path / "bugs", ui="plain", probe=False, time_s=60.0, **{"reduce": False, **kw})
    return run_campaign(cc), cc


def _folders(out):
    return sorted(p for p in out.iterdir() if p.is_dir() and p.name.isdigit()) if out.is_dir() else []


@pytest.mark.slow
def test_a_system_wrong_only_on_the_rewrite_is_caught_and_the_pair_replays(tmp_path):
    counters, cc = _campaign(tmp_path, "fault_backend:RewriteWrongBackend", oracle="metamorphic",
                             rewrites=("function",), max_tests=3)
    assert counters.tests == 3 and counters.verdicts["inconsistency"] == 3, counters
    folders = _folders(cc.out)
    assert len(folders) == 3
    bug = load_bug(folders[0])
    assert (folders[0] / REWRITE_FILE).is_file() and bug.rewrite_bytes is not None
    assert bug.meta.oracle["kind"] == "metamorphic" and bug.meta.rewrite["failed"] == "pair"
    assert [s["kind"] for s in bug.meta.rewrite["steps"]] and all(s["kind"] == "function" for s in bug.meta.rewrite["steps"])
    assert "rewrite function" in bug.meta.signature and bug.meta.first_divergent_node is None
    assert bug.oracle["output"] is not None  # the original model's outputs on the same system
    with Sandbox("fault-cpu", {}, backend_path="fault_backend:RewriteWrongBackend") as sandbox:
        sandbox.start()
        r = replay(bug, sandbox, DEFAULT_TOLERANCES)
    assert r.outcome == REPRODUCED, r.describe(bug.meta.symptom)
    with Sandbox("fault-cpu", {}, backend_path="fault_backend:FaultBackend") as sandbox:  # a right system
        sandbox.start()
        assert replay(bug, sandbox, DEFAULT_TOLERANCES, same_system=False).outcome != REPRODUCED
    (folders[0] / REWRITE_FILE).unlink()
    with pytest.raises(BugFolderError, match="model_rewrite.onnx is missing"):
        load_bug(folders[0])


@pytest.mark.slow
def test_a_system_right_on_both_models_passes_the_metamorphic_oracle(tmp_path):
    counters, cc = _campaign(tmp_path, "fault_backend:FaultBackend", oracle="metamorphic", max_tests=6)
    assert counters.tests == 6 and counters.verdicts["pass"] == 6, counters
    assert not _folders(cc.out)


@pytest.mark.slow
def test_a_segfault_on_an_invalid_model_is_saved_as_a_crash(tmp_path):
    policy = GenPolicy(max_nodes=4, dtypes=["float32"], include=SAFE_OPS, invalid=1.0)
    counters, cc = _campaign(tmp_path, "fault_backend:InvalidFaultBackend", {"on_invalid": "segfault"},
                             policy=policy, max_tests=2, rerun=False)
    assert counters.verdicts["crash"] == 2, counters
    bug = load_bug(_folders(cc.out)[0])  # model.onnx is invalid on purpose: loaded without the checker
    assert bug.meta.symptom == "crash" and bug.meta.signal == 11
    assert bug.meta.invalid["rule"] in ("dtype", "rank", "shape", "attribute", "missing-input")
    assert bug.meta.oracle["kind"] == "invalid" and bug.meta.invalid["node"] in bug.meta.invalid["checker"]
    assert sum(counters.invalid.values()) == 2 and all(k.endswith(": crash") for k in counters.invalid)


@pytest.mark.slow
def test_a_clean_rejection_of_an_invalid_model_saves_nothing(tmp_path):
    policy = GenPolicy(max_nodes=4, dtypes=["float32"], include=SAFE_OPS, invalid=1.0)
    counters, cc = _campaign(tmp_path, "fault_backend:InvalidFaultBackend", {"on_invalid": "reject"},
                             policy=policy, max_tests=4)
    assert counters.tests == 4 and counters.bugs_saved == 0, counters
    assert sum(counters.invalid.values()) == 4 and all(k.endswith(": rejected") for k in counters.invalid)
    log = list(read_log(cc.out))
    assert sum("invalid" in r for r in log) == 4


@pytest.mark.slow
def test_silent_acceptance_is_saved_only_when_outputs_contradict_the_declared_types(tmp_path):
    policy = GenPolicy(max_nodes=4, dtypes=["float32"], include=SAFE_OPS, invalid=1.0)
    counters, cc = _campaign(tmp_path, "fault_backend:InvalidFaultBackend", {"on_invalid": "accept-wrong-type"},
                             policy=policy, max_tests=2, rerun=False)
    assert counters.verdicts["inconsistency"] == 2, counters
    bug = load_bug(_folders(cc.out)[0])
    assert "accepted an invalid model" in bug.meta.summary and "declared float32" in bug.meta.summary
    assert bug.meta.signature.startswith(f"fault-cpu | inconsistency | invalid {bug.meta.invalid['rule']}")


def test_unknown_rewrite_kinds_and_a_bad_invalid_fraction_are_config_errors(capsys):
    assert main(["fuzz", "oracle=metamorphic", "metamorphic.rewrites=[funktion]", "time=1s"]) == 2
    assert "funktion" in capsys.readouterr().err
    assert main(["fuzz", "mgen.invalid=1.5", "time=1s"]) == 2
    assert "mgen.invalid=1.5" in capsys.readouterr().err


MIN_TESTS = {"ort-cpu": 20, "tvm-cpu": 3}  # in 60 s: TVM compiles each model for seconds
MAX_TESTS = {"ort-cpu": 40, "tvm-cpu": 8}  # where a smoke campaign ends, mostly well before its minute


def _smoke(backend, tmp_path, capsys, *args):
    """A campaign of at most a minute; it shares the machine's probe cache, so the time goes to testing."""
    pytest.importorskip({"ort-cpu": "onnxruntime", "tvm-cpu": "tvm"}[backend])
    out = tmp_path / "bugs"
    assert main(["fuzz", "--json", f"backend={backend}", "time=60s", f"fuzz.max_tests={MAX_TESTS[backend]}",
                 f"fuzz.out={out}", "ui=plain", "fuzz.producers=1", "mgen.max_nodes=6", "fuzz.reduce=false", *args]) == 0
    s = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert s["tests"] >= MIN_TESTS[backend] and s["nnfuzz_errors"] == 0, s
    return s, [load_bug(f) for f in _folders(out)]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["ort-cpu", "tvm-cpu"])
def test_metamorphic_smoke_campaign(backend, tmp_path, capsys):
    s, bugs = _smoke(backend, tmp_path, capsys, "oracle=metamorphic")
    assert s["oracle"] == "metamorphic"
    for bug in bugs:
        assert bug.meta.rewrite is not None and bug.meta.rewrite["steps"] and bug.meta.oracle["kind"] == "metamorphic"
        assert bug.meta.rewrite["failed"] in ("original", "rewrite", "pair")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["ort-cpu", "tvm-cpu"])
def test_invalid_models_smoke_campaign(backend, tmp_path, capsys):
    # TVM's minute holds 3 to 8 tests: at a share of 0.5, CI once drew none that TVM rejects (it accepts many)
    s, bugs = _smoke(backend, tmp_path, capsys, "mgen.invalid=1.0" if backend == "tvm-cpu" else "mgen.invalid=0.5")
    assert sum(s["invalid"].values()) >= MIN_TESTS[backend] // 4, s
    assert any(k.endswith(": rejected") for k in s["invalid"]), s  # a real system rejects most of them
    for bug in bugs:
        if bug.meta.invalid is not None:
            assert bug.meta.symptom in ("crash", "timeout") or "contradict" not in bug.meta.summary


def _ok(**outs):
    from nnfuzz.fuzz.sandbox import RunResult

    return RunResult("ok", "execute", {k: np.asarray(v) for k, v in outs.items()})


def test_a_comparison_flipped_by_rounding_in_the_rewrite_is_noise_given_the_twin():
    """Campaign regression (ort-cpu, fan-out+extra-output): exposing an intermediate changed ORT's fusion,
    a Greater of near-equal values flipped in 5 of 3430 elements, and the pair was saved as a bug. The
    float64 twin's jittered runs flip the same element: rounding, not a bug."""
    from nnfuzz.triage.judging import judge_rewrite

    res, again = _ok(y=[True, False]), _ok(y=[True, True])
    assert judge_rewrite(res, again, "ort", DEFAULT_TOLERANCES, {})[0].is_bug  # without the twin: can't tell
    twin = {"y": np.array([1.0, 0.0])}
    jitter = {"y": np.array([[1.0, 1.0], [1.0, 1.0]])}  # the jittered twin runs flip element 1
    assert not judge_rewrite(res, again, "ort", DEFAULT_TOLERANCES, {}, twin, jitter)[0].is_bug


def test_with_the_twin_either_model_of_the_pair_can_be_the_wrong_one():
    from nnfuzz.triage.judging import judge_rewrite

    twin = {"y": np.array([1.0, 2.0])}
    right, wrong = _ok(y=np.float32([1.0, 2.0])), _ok(y=np.float32([1.0, 5.0]))
    for res, again in ((right, wrong), (wrong, right)):
        v, failed = judge_rewrite(res, again, "ort", DEFAULT_TOLERANCES, {}, twin, {})
        assert v.symptom.value == "inconsistency" and failed == "pair"


def test_nan_in_both_models_at_the_same_place_agrees_and_an_alias_is_compared():
    from nnfuzz.triage.judging import judge_rewrite

    res = _ok(y=np.float32([np.nan, 1.0]))
    assert not judge_rewrite(res, _ok(y=np.float32([np.nan, 1.0]), c=np.float32([np.nan, 1.0])), "ort",
                             DEFAULT_TOLERANCES, {"c": "y"})[0].is_bug
    v, _ = judge_rewrite(res, _ok(y=np.float32([np.nan, 1.0]), c=np.float32([np.nan, 3.0])), "ort",
                         DEFAULT_TOLERANCES, {"c": "y"})
    assert v.is_bug and v.summary.startswith("c:")


@pytest.mark.slow
def test_the_rewrite_probe_leaves_out_what_the_system_cannot_read(tmp_path, monkeypatch):
    """A system that rejects model-local functions as unsupported is not given function rewrites."""
    from nnfuzz.oracles.rewrite_probe import probe_rewrites

    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(HERE))
    cc = CampaignConfig(backend="fault-cpu", backend_options={}, policy=GenPolicy(), time_s=1, out=tmp_path)
    with Sandbox("fault-cpu", {}, backend_path="fault_backend:NoFunctionsBackend") as sandbox:
        sandbox.start()
        kinds = probe_rewrites(sandbox, cc)
    assert "function" not in kinds and "function-chain" not in kinds and {"if", "loop", "reorder"} <= set(kinds)
