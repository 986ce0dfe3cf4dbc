"""A crash known only by its signal is signed by where it died (triage/signal_crash.py): the kept folders of
three OpenVINO faults that died by SIGSEGV at compile (0068, 0074, 0091) were one signature, and the kept
TensorFlow heap corruption (0094) was never known to a campaign, its signature naming the signal alone."""
import json
import shutil
import types
from pathlib import Path

import numpy as np
import pytest

from nnfuzz.cli import main
from nnfuzz.triage.bugstore import load_bug, read_err_log
from nnfuzz.triage.dedup import signature
from nnfuzz.triage.known import generic, load_known
from nnfuzz.triage.signal_crash import signal_only, stack_terms

KEPT = Path(__file__).parents[2] / "bugs" / "kept"
SIGNALLED = ("0021", "0068", "0074", "0083", "0091", "0094")   # every kept crash known only by its signal


def signed(name: str):
    bug = load_bug(KEPT / name)
    return bug.meta, signature(bug.meta, read_err_log(bug.path))


def test_the_crashing_threads_frames_are_read_from_the_faulthandler_dump():
    assert stack_terms(read_err_log(KEPT / "0068")) == ["_ov_api.compile_model"]
    assert stack_terms(read_err_log(KEPT / "0074")) == ["_ov_api.read_model"]
    assert stack_terms(read_err_log(KEPT / "0094")) == [
        "gen_math_ops.batch_mat_mul_v2", "math_ops.matmul", "dispatch.op_dispatch_handler", "op linear._matmul"]
    assert stack_terms("killed by SIGSEGV\n") == []


def test_kept_signal_crashes_are_signed_apart_and_each_known_as_itself():
    sigs = {name: signed(name)[1] for name in SIGNALLED}
    assert len(set(sigs.values())) == len(SIGNALLED), sigs
    assert " | at Div | _ov_api.compile_model" in sigs["0068"]
    assert " | at Softshrink | _ov_api.read_model" in sigs["0074"]
    assert " | at QuantizeLinear | _ov_api.compile_model" in sigs["0091"]
    assert sigs["0094"].endswith("| op linear._matmul")
    known = load_known(kept=True)  # what a campaign loads: every kept folder, signed by today's rules
    for name in SIGNALLED:
        meta, sig = signed(name)
        assert signal_only(meta, read_err_log(KEPT / name)) and not generic(sig)
        assert Path(known.match(meta, sig)).resolve() == (KEPT / name).resolve(), name


def test_a_signal_crash_that_names_no_op_stays_generic():
    assert generic("openvino-cpu | crash | compile | ? | killed by SIGSEGV | signal 11 | _ov_api.compile_model")
    assert generic("tf-cpu | crash | execute | ? | killed by SIGABRT | signal 6")
    assert not generic("openvino-cpu | crash | compile | ? | killed by SIGSEGV | signal 11 | at Div | _ov_api.compile_model")
    assert not generic("tvm-cpu | crash | compile | ? | killed by SIGSEGV | signal 11 | tvm::relax::Foo")


def as_saved_before_version_12(name: str, dst: Path) -> None:
    shutil.copytree(KEPT / name, dst, ignore=shutil.ignore_patterns("original", "report.md", "repro_*"))
    meta = json.loads((dst / "meta.json").read_text())
    meta.update(root_cause=None, signature=None)
    meta.pop("recheck", None)
    (dst / "meta.json").write_text(json.dumps(meta))


@pytest.mark.slow  # starts an OpenVINO sandbox; each localization runs the crashing node's own graph
def test_recheck_localizes_three_openvino_segfaults_to_three_signatures(tmp_path, capsys):
    pytest.importorskip("openvino")
    store = tmp_path / "bugs"
    store.mkdir()
    for k, name in enumerate(("0068", "0074", "0091")):
        as_saved_before_version_12(name, store / f"{k:04d}")
    assert main(["dedup", "--json", str(store)]) == 0
    # unlocalized, the frames tell converting (0074: read_model) from compiling, not 0068 from 0091
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["unique"] == 2
    assert main(["dedup", "--json", str(store), "--recheck"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["unique"] == 3 and out["recheck"] == {"reproduces": 3}, out
    roots = [json.loads((store / f"{k:04d}" / "meta.json").read_text())["root_cause"] for k in range(3)]
    assert [(r["op"], r["index"], r["method"]) for r in roots] == [
        ("Div", 1, "signal"), ("Softshrink", 1, "signal"), ("QuantizeLinear", 4, "signal")]
    for k, name in enumerate(("0068", "0074", "0091")):  # as the kept folder, re-signed the same way
        assert signature(load_bug(store / f"{k:04d}").meta, read_err_log(store / f"{k:04d}")) == signed(name)[1]


@pytest.mark.slow  # starts an OpenVINO sandbox
def test_two_localizations_of_one_crash_agree(tmp_path):
    pytest.importorskip("openvino")
    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.triage.bugstore import bug_weights
    from nnfuzz.triage.repro import results_on
    from nnfuzz.triage.signal_crash import signal_root_of

    bug = load_bug(KEPT / "0091")
    meta = bug.meta.replace(root_cause=None)
    with Sandbox("openvino-cpu", {}, test_timeout=60.0) as sandbox:
        sandbox.start()
        roots = [signal_root_of(meta, read_err_log(bug.path), bug.gir_text, bug_weights(bug), dict(bug.oracle["input"]),
                                bug.model_bytes, results_on(sandbox, "onnx")) for _ in range(2)]
    assert roots[0] is not None and roots[0] == roots[1] == bug.meta.root_cause


def test_a_campaign_signs_one_signal_fault_in_different_graphs_alike(tmp_path):
    """The campaign's save path localizes a crash known only by its signal (fuzz/saving.py): graphs that die
    because they hold a Tanh are one signature, ``at Tanh``; a second campaign counts it as known, and steers
    away from the Tanh when it may."""
    from fake_backends import fake_campaign, folders, records

    out = tmp_path / "bugs"
    fake_campaign(out, backend="FakeTanhCrashBackend", max_tests=10, rerun=False, keep_per_signature=0,
                  known_kept=False)
    crashes = [r for r in records(out) if r.get("verdict") == "crash"]
    assert len(crashes) >= 2 and len({r["signature"] for r in crashes}) == 1, crashes
    assert crashes[0]["signature"].endswith("| killed by SIGSEGV | signal 11 | at Tanh"), crashes[0]
    metas = [load_bug(p).meta for p in folders(out)]
    assert len({len(m.ops) for m in metas}) > 1 or len({tuple(m.ops) for m in metas}) > 1  # different graphs
    assert all(m.root_cause["method"] == "signal" and m.root_cause["op"] == "Tanh" for m in metas)
    again = tmp_path / "again"
    fake_campaign(again, backend="FakeTanhCrashBackend", seed=7, max_tests=6, rerun=False, known=[str(out)],
                  known_kept=False, steer_known=False)
    later = [r for r in records(again) if r.get("verdict") == "crash"]
    assert later and all(r["bug_status"] == "known" for r in later), later
    steered = tmp_path / "steered"
    fake_campaign(steered, backend="FakeTanhCrashBackend", seed=7, max_tests=6, rerun=False, known=[str(out)],
                  known_kept=False)
    assert not [r for r in records(steered) if r.get("verdict") == "crash"]  # the known folder's trigger: Tanh


DUMP = """killed by SIGSEGV

Fatal Python error: Segmentation fault

Current thread 0x00007f2227e59b80 (most recent call first):
  File "/site-packages/system/api.py", line 646 in compile_model
  File "/work/main/nnfuzz/backends/system.py", line 76 in compile
"""


class DiesOnTanh:
    """A sandbox whose system dies by SIGSEGV compiling any model with a Tanh (printing its faulthandler dump,
    as a worker does) and computes the others with ONNX's reference evaluator: reduction's checks, with no
    process to start."""
    backend_info = types.SimpleNamespace(name="ort-cpu", engine="ort")

    def run_model(self, model, inputs, fmt="onnx", **_):
        from onnx.reference import ReferenceEvaluator

        from nnfuzz.fuzz.sandbox import RunResult

        if any(inst.op.name == "Tanh" for inst in model.gir.insts):
            return RunResult("crash", "compile", None, error="killed by SIGSEGV", detail=DUMP, signal=11)
        ref = ReferenceEvaluator(model.onnx)
        return RunResult("ok", "execute", dict(zip(ref.output_names, ref.run(None, inputs))))


def test_reduction_localizes_each_candidate_of_a_signal_crash_again():
    """A candidate keeps the bug only where its own crash localizes to the same op (bug_reduction.Checker)."""
    from graphs import chain

    from nnfuzz.ops.elementwise import spec as E
    from nnfuzz.triage.bug_reduction import Checker
    from nnfuzz.triage.meta import BugMeta
    from nnfuzz.triage.node_deletion import Candidate

    x = {"x": np.linspace(-1, 1, 6, dtype=np.float32)}
    meta = BugMeta(system="ort-cpu", version="?", version_id="?", symptom="crash", stage="compile",
                   summary="killed by SIGSEGV", signal=11, nodes=3, format="onnx",
                   root_cause={"op": "Tanh", "index": 1, "kind": "crash", "method": "signal"})
    check = Checker(DiesOnTanh(), meta, {})
    want = check.signature(Candidate(chain(E.Relu(), E.Tanh(), E.Sigmoid()), {}, x))
    assert want == "ort-cpu | crash | compile | ? | killed by SIGSEGV | signal 11 | at Tanh | api.compile_model"
    assert check.bug_meta.root_cause["index"] == 1
    assert check.signature(Candidate(chain(E.Tanh(), E.Sigmoid()), {}, x)) == want  # the Relu deleted: same fault
    assert check.bug_meta.root_cause["index"] == 0
    assert check.signature(Candidate(chain(E.Relu(), E.Sigmoid()), {}, x)) is None  # the Tanh deleted: no crash
