"""An inconsistency that exposing every value makes disappear, on a real ONNX Runtime fault: kept bug 0046,
where the basic-level EliminateSlice drops a Slice with a step (INT64_MAX end) unless the Slice's output
is a graph output. Its wrong output shape first shows with the graph cut after the Exp that reads the Slice
(nnfuzz/triage/truncate.py), and it is what the Exp gives the Slice's input: the Slice is charged, as if it
were not there (one signature whichever op reads it). Without the shape, the node whose output, exposed
alone, removes the fault would be charged (nnfuzz/triage/fusion_cut.py; on a real fault in
tests/backends/test_openvino_dynamic_bug.py)."""
import pytest

from nnfuzz.gir import GraphIR
from nnfuzz.triage.bugstore import bug_weights, kept_store, load_bug
from nnfuzz.triage.dedup import signature
from nnfuzz.triage.localize import localize
from nnfuzz.triage.meta import BugMeta
from nnfuzz.verdict import DEFAULT_TOLERANCES

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


def test_a_wrong_shape_that_full_exposure_hides_is_charged_to_the_first_node_that_gives_it():
    from nnfuzz.materialize.model import build_model
    from nnfuzz.triage.fusion_cut import cut_root

    gir, w, x, export = _kept("0046")
    original = run_ort(build_model(gir, 0, export=export, values=(w, x)), x)  # the test's run: the fault shows
    loc = localize(gir, w, x, run_ort, export=export, original=original)
    root = loc.root_cause
    assert root is not None, loc.note
    assert (root["method"], root["op"], root["kind"], root["system_op"]) == ("truncate", "Slice", "shape", "Slice"), root
    assert loc.blame == "system-under-test" and "as if the Slice were not there" in loc.note
    sig = signature(BugMeta(system="ort-cpu", symptom="inconsistency", root_cause=root, summary="v9: shape"))
    assert sig == "ort-cpu | inconsistency | Slice | shape"
    # the cut, which a fault of values falls to, removes it by exposing the Slice
    cut = cut_root(gir, w, x, run_ort, DEFAULT_TOLERANCES, export)
    assert (cut["method"], cut["op"], cut["kind"]) == ("cut", "Slice", "fused"), cut


def test_a_consumer_whose_shape_is_not_what_it_gives_the_earlier_input_keeps_the_blame():
    """Kept 0020: a Transpose after a Slice is wrong only when the Slice is not the graph's output, as in 0046,
    but the shape it gives is not what it gives the Slice's input (another fault, which disabling EliminateSlice
    does not remove): the Transpose stays charged, and the two faults keep two signatures."""
    from nnfuzz.materialize.model import build_model

    gir, w, x, export = _kept("0020")
    original = run_ort(build_model(gir, 0, export=export, values=(w, x)), x)
    root = localize(gir, w, x, run_ort, export=export, original=original).root_cause
    assert (root["method"], root["op"], root["kind"]) == ("truncate", "Permute", "shape"), root


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
