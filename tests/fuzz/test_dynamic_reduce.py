"""Reducing a dynamic bug with its shape family kept (nnfuzz/triage/dynamic_reduction.py): nodes go while the
bug holds, every candidate compiled once with its symbolic dims and run at every shape. The fault is a
fake's, in-process (a Sigmoid wrong only in a model with a dim_param input): no real system gives a
dynamic-only fault on demand."""
import onnx
import pytest
from dynamic_bugs import dynamic_build, dynamic_bug

from nnfuzz.fuzz.inprocess import InProcessSandbox
from nnfuzz.triage.bug_reduction import reduce_bug
from nnfuzz.triage.bugstore import load_bug
from nnfuzz.triage.dynamic_reduction import deleter, start_of
from nnfuzz.triage.judging import bug_signature
from nnfuzz.triage.meta import write_meta
from nnfuzz.triage.repro import REPRODUCED, replay
from nnfuzz.verdict import DEFAULT_TOLERANCES

OPS = ("Sigmoid", "Add", "Relu", "Mul")


def _sandbox(cls="FakeSymbolicSigmoidBackend"):
    return InProcessSandbox("fake-cpu", backend_path=f"fake_backends:{cls}")


def _signed_bug(tmp_path):
    """A dynamic bug folder of the fake's Sigmoid fault, localized and signed as the replay finds it (as
    `nnfuzz dedup --recheck` re-signs a folder)."""
    path = dynamic_bug(tmp_path, system="fake-cpu", ops=OPS, max_nodes=6, having="Sigmoid")
    r = replay(load_bug(path), _sandbox(), DEFAULT_TOLERANCES, relocalize=True)
    assert r.meta is not None and r.meta.root_cause["op"] == "Sigmoid", r.describe("inconsistency")
    write_meta(r.meta.replace(signature=bug_signature(r.meta, r.verdict)))(path / "meta.json")
    return load_bug(path)


def _symbolic_inputs(model_bytes: bytes) -> set:
    graph = onnx.load_model_from_string(model_bytes).graph
    return {d.dim_param for i in graph.input for d in i.type.tensor_type.shape.dim if d.dim_param}


def test_a_dynamic_bug_is_reduced_with_its_symbolic_dims_and_every_shape(tmp_path):
    bug = _signed_bug(tmp_path)
    want, before = bug.meta.signature, bug.meta.dynamic
    assert want == "fake-cpu | inconsistency | dynamic | Sigmoid | values", want
    got = reduce_bug(bug, _sandbox(), DEFAULT_TOLERANCES, 60.0)
    assert got["status"] == "reduced" and got["nodes_after"] < got["nodes_before"], got
    small = load_bug(bug.path)
    assert "Sigmoid" in small.meta.ops and small.meta.signature == want
    dyn = small.meta.dynamic
    assert len(dyn["assignments"]) == len(before["assignments"]) == len(small.oracle["shapes"])  # every shape kept
    symbols = {s for axes in dyn["dims"].values() for s in axes if s}
    assert symbols and symbols <= {s for axes in before["dims"].values() for s in axes if s}
    assert _symbolic_inputs(small.model_bytes) == symbols  # still a dim_param model
    assert dyn["static"] == "passes"
    assert replay(small, _sandbox(), DEFAULT_TOLERANCES).outcome == REPRODUCED
    # where the system is right, the reduced bug does not show
    assert replay(small, _sandbox("FakeBackend"), DEFAULT_TOLERANCES, same_system=False).outcome != REPRODUCED


def test_a_deleted_node_becomes_an_input_with_the_symbols_of_its_dims():
    gir, built, _ = dynamic_build(1, OPS, max_nodes=6, having="Sigmoid")

    class Bug:  # what start_of reads of a folder
        class meta:
            dynamic = built.family.to_json()
        oracle = {"shapes": [{"input": r.input, "output": r.output} for r in built.shapes]}

    start = start_of(Bug, built.model.gir, built.model.weights)
    delete = deleter(start)
    tried = 0
    for k in range(len(start.gir.insts)):
        c = delete(start, k)
        if c is None:
            continue
        tried += 1
        fam = c.gir.family
        assert fam.symbols() and all(set(a) == set(fam.symbols()) for a in fam.assignments)
        for j, x in enumerate(c.shapes):  # each shape's inputs have that shape's sizes
            at = c.gir.at(j)
            assert {i: list(v.shape) for i, v in x.items()} == {i: [int(d) for d in at.vars[i].shape] for i in x}
    assert tried


@pytest.mark.slow
def test_a_campaigns_dynamic_bug_is_reduced(tmp_path):
    """A folder a campaign saved (an in-process fake campaign), reduced as `nnfuzz reduce` and the campaign's
    background reducer reduce it."""
    from fake_backends import fake_campaign, folders

    from nnfuzz.generate.policy import GenPolicy

    policy = GenPolicy(max_nodes=6, dtypes=["float32"], include=list(OPS), seed=2)
    _, cc = fake_campaign(tmp_path / "bugs", backend="FakeSymbolicSigmoidBackend", max_tests=6, dynamic=1.0,
                          rerun=False, policy=policy)
    bugs = [b for b in map(load_bug, folders(cc.out)) if b.meta.dynamic is not None and b.meta.nodes > 1]
    assert bugs
    got = reduce_bug(bugs[0], _sandbox(), DEFAULT_TOLERANCES, 60.0)
    assert got["status"] in ("reduced", "minimal"), got
    small = load_bug(bugs[0].path)
    assert small.meta.signature == bugs[0].meta.signature and _symbolic_inputs(small.model_bytes)
