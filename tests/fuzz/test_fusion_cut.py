"""An inconsistency that exposing every value makes disappear is charged to the node whose output,
exposed alone, removes it (nnfuzz/triage/fusion_cut.py), on a real ONNX Runtime fault: kept bug 0046,
where the basic-level EliminateSlice drops a Slice with a step (INT64_MAX end) unless the Slice's output
is a graph output."""
import pytest

from nnfuzz.gir import GraphIR
from nnfuzz.triage.bugstore import bug_weights, kept_store, load_bug
from nnfuzz.triage.dedup import signature
from nnfuzz.triage.localize import localize
from nnfuzz.triage.meta import BugMeta

ort = pytest.importorskip("onnxruntime")


def run_ort(model, inputs):
    sess = ort.InferenceSession(model.onnx.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


def _kept(n):
    store = kept_store()
    if store is None:
        pytest.skip("not a checkout: no bugs/kept/")
    bug = load_bug(store / n)
    return GraphIR.loads(bug.gir_text), bug_weights(bug), bug.oracle["input"], bug.meta.export_spec()


def test_a_fault_that_full_exposure_removes_is_charged_to_the_cut_that_removes_it():
    from nnfuzz.materialize.model import build_model

    gir, w, x, export = _kept("0046")
    original = run_ort(build_model(gir, 0, export=export, values=(w, x)), x)  # the test's run: the fault shows
    loc = localize(gir, w, x, run_ort, export=export, original=original)
    root = loc.root_cause
    assert root is not None, loc.note
    assert (root["method"], root["op"], root["kind"], root["system_op"]) == ("cut", "Slice", "fused", "Slice"), root
    assert loc.blame == "system-under-test" and "alone makes the outputs right" in loc.note
    sig = signature(BugMeta(system="ort-cpu", symptom="inconsistency", root_cause=root, summary="v9: shape"))
    assert sig == "ort-cpu | inconsistency | Slice | fused"


def test_without_the_fault_no_cut_is_blamed():
    """The same graph with optimizations off agrees everywhere: nothing to charge."""
    gir, w, x, export = _kept("0046")

    def unoptimized(model, inputs):
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(model.onnx.SerializeToString(), so, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        return dict(zip(names, sess.run(names, inputs)))

    from nnfuzz.materialize.model import build_model

    original = unoptimized(build_model(gir, 0, export=export, values=(w, x)), x)
    loc = localize(gir, w, x, unoptimized, export=export, original=original)
    assert loc.root_cause is None and loc.first_divergent_node is None, loc
