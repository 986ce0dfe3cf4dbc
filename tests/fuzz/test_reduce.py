"""`nnfuzz reduce` on real ONNX Runtime bugs: a crash (FuseReluClip on a float64 Relu -> Clip) and
an inconsistency (the exporter's Log(Sigmoid(x)) for torch's logsigmoid underflows in ORT)."""
import json

import numpy as np
import pytest
from exported_ops import ExportedLogSigmoid

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.ops.select import spec as S
from nnfuzz.cli import main
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.triage.bugstore import BugStore, load_bug

pytest.importorskip("onnxruntime")


def graph(dtype, ops, shape=(6,)):
    """x -> ops[0] -> ... plus a side branch from x, so that there is something to cut."""
    g = GraphIR()
    g.vars["x"] = AbsTensor(list(shape), dtype)
    g.inputs = ["x"]
    prev = "x"
    for k, op in enumerate(ops):
        g.vars[f"v{k}"] = op.checked_type_transfer([g.vars[prev]])[0]
        g.insts.append(Inst(op, [prev], [f"v{k}"]))
        prev = f"v{k}"
    g.vars["side"] = AbsTensor(list(shape), dtype)
    g.insts.append(Inst(E.Sin(), ["x"], ["side"]))
    used = {v for i in g.insts for v in i.inputs}
    g.outputs = [v for i in g.insts for v in i.outputs if v not in used]
    return g.check()


def make_bug(tmp_path, gir, x, symptom):
    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.materialize.model import build_model
    from nnfuzz.triage.meta import BugMeta
    from nnfuzz.triage.bug_reduction import Checker

    from nnfuzz.materialize.onnx.spec import ExportSpec

    # canonical spellings: Clip with its bounds as inputs, the form ORT's Relu-Clip fusion crashes on
    model = build_model(gir, 0, values=({}, {"x": x}), export=ExportSpec(opset=17, spelling="canonical"))
    meta = BugMeta(system="ort-cpu", version="?", version_id="?", symptom=symptom, nodes=gir.n_nodes,
                   opset=model.export.opset, export=model.export.record(model.spellings))
    with Sandbox("ort-cpu", {}, test_timeout=30.0, memory_limit_mb=4096) as sb:
        sb.start()
        from nnfuzz.triage.node_deletion import Candidate

        check = Checker(sb, meta, {})
        sig = check.signature(Candidate(gir, {}, {"x": x}))
        v = check.verdict
    assert sig is not None and symptom in sig, sig
    path = BugStore(tmp_path / "bugs").save(model_bytes=model.onnx.SerializeToString(), gir_text=gir.dumps(),
                                            oracle=model.oracle.to_dict(),
                                            meta=check.bug_meta.replace(signature=sig),
                                            err_log=f"{v.summary}\n\n{v.detail}\n")
    return path, sig


@pytest.mark.slow
def test_reduce_keeps_an_ort_crash_and_shrinks_it(tmp_path, capsys):
    ops = [E.Sigmoid(), E.Tanh(), E.Relu(), S.Clip(min=-6.0, max=6.0), E.Abs(), E.Neg()]
    gir = graph(DType.float64, ops)
    path, sig = make_bug(tmp_path, gir, np.linspace(-2, 2, 6), "crash")
    assert main(["reduce", "--json", str(path)]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["status"] == "reduced" and out["nodes_before"] == 7 and out["nodes_after"] < 7
    assert out["elements_after"] < out["elements_before"]  # the [6] tensors shrank too
    bug = load_bug(path)
    assert bug.meta.signature == sig and bug.meta.reduced["nodes_after"] == out["nodes_after"]
    assert "Clip" in bug.meta.ops and "Sin" not in bug.meta.ops
    kept = GraphIR.loads(bug.gir_text).vars
    assert set(bug.meta.export["spellings"]) <= set(kept), "spellings of removed nodes left in meta.json"
    assert (path / "original" / "gir.json").read_text() == gir.dumps()
    assert main(["repro", str(path)]) == 0  # the reduced bug still reproduces with the same symptom
    assert main(["reduce", str(path)]) == 0 and "reduced already" in capsys.readouterr().out


@pytest.mark.slow
def test_reduce_keeps_an_ort_inconsistency_at_the_same_op(tmp_path, capsys, registered):
    ops = [E.Relu(), E.Neg(), ExportedLogSigmoid(), E.Abs(), E.Neg(), E.Floor()]
    gir = graph(DType.float32, ops)
    x = np.array([1, 50, 100, 120, 150, 200], np.float32)
    path, sig = make_bug(tmp_path, gir, x, "inconsistency")
    assert "ExportedLogSigmoid" in sig
    assert main(["reduce", "--json", str(path)]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["status"] == "reduced" and out["nodes_after"] <= 2, out
    bug = load_bug(path)
    assert "ExportedLogSigmoid" in bug.meta.ops and bug.meta.signature == sig
    assert main(["repro", str(path)]) == 0


def test_reduce_rejects_bad_arguments(tmp_path, capsys):
    assert main(["reduce"]) == 2
    assert main(["reduce", str(tmp_path), "reduce_s=soon"]) == 2
    assert "reduce_s='soon'" in capsys.readouterr().err
    assert main(["reduce", str(tmp_path / "nothing")]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_shrink_minimises_shapes_and_attributes_under_the_constraints():
    """With a predicate that always holds, every dimension and size attribute goes to its minimum
    while the graph stays valid (GraphIR.check runs on the result)."""
    from nnfuzz.ops.conv import spec as CV
    from nnfuzz.materialize.model import random_values
    from nnfuzz.triage.node_deletion import Candidate
    from nnfuzz.triage.shrink import shrink, total_elements

    g = GraphIR()
    g.vars["x"] = AbsTensor([2, 3, 17], DType.float32)
    g.vars["w"] = AbsTensor([4, 3, 5], DType.float32)
    g.inputs, g.weights = ["x"], ["w"]
    op = CV.Conv1d(2, 1, 1, 1)  # stride 2, padding 1, dilation 1, groups 1
    g.vars["y"] = op.checked_type_transfer([g.vars["x"], g.vars["w"]])[0]
    g.insts, g.outputs = [Inst(op, ["x", "w"], ["y"])], ["y"]
    g.check()
    w, i = random_values(g, np.random.default_rng(0))
    small = shrink(Candidate(g, w, i), lambda c: True)
    assert small is not None and total_elements(small) < total_elements(Candidate(g, w, i))
    x, k = small.gir.vars["x"].shape, small.gir.vars["w"].shape
    assert x[0] == 1 and x[1] == k[1] == 1 and k[0] == 1, small.gir.pretty()
    np.testing.assert_array_equal(small.inputs["x"], i["x"][: x[0], : x[1], : x[2]])  # the leading corner


@pytest.mark.slow
def test_repro_of_a_crash_with_another_recorded_signature_fails_differently(tmp_path, capsys):
    """The same symptom is not enough: a recorded crash whose error text (so signature) differs from the
    replay's is another bug, exit 3, and both signatures are shown."""
    gir = graph(DType.float64, [E.Relu(), S.Clip(min=-6.0, max=6.0)])
    path, sig = make_bug(tmp_path, gir, np.linspace(-2, 2, 6), "crash")
    assert main(["repro", str(path)]) == 0
    capsys.readouterr()
    meta = json.loads((path / "meta.json").read_text())
    other = "RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code in Conv"
    (path / "meta.json").write_text(json.dumps({**meta, "summary": other}))
    (path / "err.log").write_text(other + "\n")
    assert main(["repro", str(path)]) == 3
    out = capsys.readouterr().out
    assert "fails differently" in out and "Conv" in out and "signature now" in out, out
    assert main(["repro", str(path), "--json"]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["signature"] == sig and doc["outcome"] == "fails-differently" and doc["reproduces"] is False


@pytest.mark.slow
def test_reduce_follows_todays_signature_rules_not_a_stale_recorded_one(tmp_path, capsys):
    """A folder saved under an older SIGNATURE_VERSION (its meta.json's signature spelled by older rules)
    still reduces: the target signature is recomputed from meta.json and err.log, as repro does."""
    gir = graph(DType.float64, [E.Relu(), S.Clip(min=-6.0, max=6.0), E.Abs()])
    path, sig = make_bug(tmp_path, gir, np.linspace(-2, 2, 6), "crash")
    meta = json.loads((path / "meta.json").read_text())
    (path / "meta.json").write_text(json.dumps({**meta, "signature": "ort-cpu | crash | an older rule's text"}))
    assert main(["reduce", "--json", str(path)]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["status"] == "reduced", out
    assert load_bug(path).meta.signature == sig
