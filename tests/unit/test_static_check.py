"""The static check of a dynamic test (nnfuzz/triage/static_check.py): the static model of the failing shape k
is compiled once and inferred k + 1 times on shape k's inputs, as the dynamic compile was, and its last
inference is judged; a fault its first inference does not show is told apart (signature term ``again``)."""
import numpy as np

from nnfuzz.fuzz.sandbox import RunResult
from nnfuzz.triage.static_check import AGAIN, STATIC_PASSES, static_check, static_term
from nnfuzz.verdict import judge

RIGHT = {"y": np.array([1.0, 2.0], np.float32)}


def system(wrong_from: int):
    """A sandbox's ``run`` whose model, compiled once, answers RIGHT up to inference ``wrong_from`` (0-based)
    and off by one from there; it records the inputs each run was sent."""
    sent = []

    def run(payload, inputs):
        sent.append(inputs)
        outs = [{"y": RIGHT["y"] + (j >= wrong_from)} for j in range(len(inputs))]
        return RunResult("ok", "execute", outs[0], shapes=outs, compiles=1)
    return run, sent


def check(run, k):
    return static_check(run, b"model", {"x": np.ones(2, np.float32)}, k, lambda r: judge(r, RIGHT, "fake"))


def test_the_static_model_is_inferred_as_often_as_the_dynamic_one_and_its_last_inference_judged():
    run, sent = system(wrong_from=1)  # right on a compiled model's first inference only (bugs/kept/0085)
    assert check(run, 0) == STATIC_PASSES  # failed at shape 0: one inference, right
    assert check(run, 2) == f"{AGAIN} (inconsistency)"  # at shape 2: the third inference is judged
    assert [len(s) for s in sent] == [1, 3] and all(np.array_equal(x["x"], np.ones(2)) for x in sent[1])


def test_a_fault_of_every_inference_fails_and_a_right_system_passes():
    assert check(system(wrong_from=0)[0], 2) == "fails (inconsistency)"
    assert check(system(wrong_from=9)[0], 2) == STATIC_PASSES
    assert check(lambda payload, inputs: None, 1) is None  # the campaign's time bound cut the run short


def test_a_crash_on_a_later_inference_fails():
    def run(payload, inputs):
        return RunResult("crash", "execute", None, "SIGSEGV", shape=1, signal=11)
    assert check(run, 1) == "fails (crash)"


def test_the_signature_term_follows_the_static_check():
    assert static_term(STATIC_PASSES) == "dynamic"
    assert static_term(f"{AGAIN} (inconsistency)") == "again"
    assert static_term("fails (inconsistency)") is None and static_term(None) is None
