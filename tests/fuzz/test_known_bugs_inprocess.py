"""Known bugs and examples per signature (nnfuzz/triage/known.py, triage/deduper.py, fuzz/sink.py) on the
in-process executor with the fake backends: the N smallest examples of a signature kept and the rest
counted, a store's signatures counted as known and not reduced, clear errors for a bad known-bugs file or
store, and steering that removes a known trigger's op x dtype (or spelling) from generated graphs."""
import dataclasses

import pytest
from fake_backends import SAFE_OPS, fake_campaign, folders, records

from nnfuzz.errors import ConfigError
from nnfuzz.fuzz.sink import BugSink
from nnfuzz.triage.bugstore import load_bug
from nnfuzz.triage.known import load_known, read_known_file


def _bugs(out) -> list:
    return [r for r in records(out) if r.get("verdict") == "crash"]


def _policy(nodes: int, seed: int = 1):
    from nnfuzz.generate.policy import GenPolicy

    return GenPolicy(max_nodes=nodes, dtypes=["float32"], include=SAFE_OPS, seed=seed)


def test_keep_per_signature_keeps_the_smallest_examples_and_counts_the_rest(tmp_path):
    out = tmp_path / "bugs"
    counters, cc = fake_campaign(out, {"always": "raise"}, max_tests=5, rerun=False, keep_per_signature=2,
                                 policy=_policy(5))
    bugs = _bugs(out)
    assert len(bugs) == 5 and len({r["signature"] for r in bugs}) == 1, bugs
    assert [r["kept"] for r in bugs] == ["saved", "saved", "counted", "counted", "counted"]
    assert [r["bug_status"] for r in bugs] == ["new"] + ["duplicate"] * 4
    assert all("bug" not in r for r in bugs[2:]) and counters.counted == 3 and counters.bugs_saved == 2
    assert counters.new_root_causes == 1 and counters.new_hits == 5 and counters.new_folders == 2
    assert counters.known_root_causes == counters.known_hits == 0
    # smaller graphs of the same bug replace the larger examples in place; then they are counted
    counters, cc = fake_campaign(out, {"always": "raise"}, max_tests=4, rerun=False, keep_per_signature=2,
                                 policy=_policy(3, seed=40))
    bugs = _bugs(out)[5:]
    assert [r["kept"] for r in bugs] == ["replaced", "replaced", "counted", "counted"], bugs
    assert [p.name for p in folders(out)] == ["0000", "0001"]          # numbered without gaps
    assert not [p for p in out.iterdir() if p.name.startswith(".")]   # no staging folder left
    metas = [load_bug(p).meta for p in folders(out)]
    assert [m.nodes for m in metas] == [3, 3] and [m.duplicate_of for m in metas] == [None, "0000"]
    assert {r["bug"] for r in bugs[:2]} == {str(p) for p in folders(out)}
    assert counters.replaced == 2 and counters.counted == 2 and counters.bugs_saved == 0


def test_a_signature_of_a_known_store_is_counted_as_known_and_not_reduced(tmp_path, monkeypatch):
    old, _ = fake_campaign(tmp_path / "old", {"always": "raise"}, max_tests=1, rerun=False)
    assert old.new_root_causes == 1
    reduced = []
    monkeypatch.setattr(BugSink, "_reduce_later", lambda self, path: reduced.append(path))
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "raise"}, max_tests=4, rerun=False, reduce=True,
                                 keep_per_signature=1, known=(tmp_path / "old",), seed=7)
    bugs = _bugs(cc.out)
    assert [r["bug_status"] for r in bugs] == ["known"] * 4
    assert all(r["known"].endswith("old/0000") for r in bugs), bugs[0]
    assert counters.known_root_causes == 1 and counters.known_hits == 4 and counters.known_folders == 1
    assert counters.new_root_causes == 0 and counters.new_unique == 0 and len(folders(cc.out)) == 1
    assert reduced == []  # a known root cause is not reduced again
    # the same bug without the old store as known: new, and handed to the reducer
    counters, cc = fake_campaign(tmp_path / "fresh", {"always": "raise"}, max_tests=1, rerun=False, reduce=True)
    assert counters.new_root_causes == 1 and [p.name for p in reduced] == ["0000"]


def test_a_known_file_entry_matches_by_system_and_message(tmp_path):
    known = tmp_path / "known.yaml"
    known.write_text("known:\n  - system: fake-cpu\n    message: injected fail\n    kind: crash\n    note: ours\n")
    counters, cc = fake_campaign(tmp_path / "bugs", {"always": "raise"}, max_tests=2, rerun=False, known_file=known)
    assert [r["bug_status"] for r in _bugs(cc.out)] == ["known", "known"]
    assert _bugs(cc.out)[0]["known"].endswith("known.yaml entry 0 (ours)") and counters.known_root_causes == 1


@pytest.mark.parametrize("text, where", [
    ("- {system: ort-cpu, op: Shrink, dtype: float65}", "entry 0: dtype='float65' is not a dtype"),
    ("- {op: Shrink}\n- {system: ort-cpu, op: Add, colour: red}", "entry 1: unknown field 'colour'"),
    ("- {system: ort-cpu, kind: wrong, op: Add}", "entry 0: kind='wrong' is not a kind"),
    ("- {system: ort-cpu, message: '(unclosed'}", "entry 0: message='(unclosed' is not a regular expression"),
    ("- {system: ort-cpu}", "entry 0: give op or message"),
    ("- {system: ort cpu, op: Add}", "entry 0: system='ort cpu' is not a backend name"),
    ("- {op: Add, spelling: [shape]}", "entry 0: spelling=['shape'] must map spelling keys"),
    ("known: 3", "expected a list of known bugs"),
    ("- [unclosed", "is not readable YAML"),
])
def test_a_malformed_known_file_is_a_clear_error(tmp_path, text, where):
    path = tmp_path / "known.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as e:
        read_known_file(path)
    assert "known.yaml" in str(e.value) and where in str(e.value), str(e.value)


def test_a_known_path_that_is_not_a_store_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="no/such/store does not exist"):
        load_known([tmp_path / "no" / "such" / "store"], kept=False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="empty is not a bug store"):
        load_known([tmp_path / "empty"], kept=False)
    with pytest.raises(ConfigError, match="fuzz.known_file: .*missing.yaml is not a file"):
        fake_campaign(tmp_path / "bugs", {}, max_tests=1, known_file=tmp_path / "missing.yaml")


def test_the_repository_known_bugs_load_and_name_the_shrink_precision_bug():
    from nnfuzz.triage.meta import BugMeta

    known = load_known()
    assert len(known.folders) >= 22 and not known.unreadable, known.unreadable
    meta = BugMeta(system="ort-cpu", symptom="inconsistency", summary="v3: 1/4 values off",
                   root_cause={"op": "Softshrink", "dtype": "float64", "kind": "precision", "index": 0})
    assert "ONNX Runtime computes a float64 Shrink" in known.match(meta, "ort-cpu | inconsistency | new")
    assert known.match(meta.replace(root_cause={**meta.root_cause, "dtype": "float32"}), "x") is None
    triggers = known.triggers("ort-cpu")
    assert {"bug", "op", "dtypes", "dtype", "spelling"} <= set(triggers[0])
    assert {t["op"] for t in triggers if t["dtype"] == "float64"} == {"Shrink", "Softshrink", "Hardshrink"}
    tvm = known.triggers("tvm-cpu")  # an entry's dtype list, and a spelling of every op (no op named)
    assert {t["dtype"] for t in tvm if t["op"] == "ThresholdedRelu"} >= {"float16", "float64"}
    assert any(t["op"] == "*" and ("shape", "computed") in t["spelling"] for t in tvm)


def _graphs(policy, ops, rows, n=30):
    from nnfuzz.errors import ConstraintError
    from nnfuzz.generate.symbolic import GraphGenerator

    out = []
    for seed in range(n):
        try:
            out.append(GraphGenerator(dataclasses.replace(policy, seed=seed), ops, rows=rows).generate())
        except ConstraintError:
            continue
    return out


def test_steering_removes_the_triggers_op_x_dtype_and_keeps_its_other_rows():
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.generate.policy import GenPolicy
    from nnfuzz.generate.steer import steer

    policy = GenPolicy(max_nodes=5, dtypes=["float32", "float64"], include=SAFE_OPS, guide="none")
    ops = select_ops(policy)

    def pairs(graphs):
        return {(i.op.name, graphs_dtype(g, i)) for g in graphs for i in g.insts}

    def graphs_dtype(g, inst):
        return g.vars[inst.inputs[0]].dtype.value

    before = pairs(_graphs(policy, ops, {}))
    assert ("Add", "float64") in before and ("Add", "float32") in before
    trigger = {"bug": "k", "op": "Add", "dtypes": ["float64", "float64"], "dtype": None, "spelling": []}
    ops2, rows, _, notes = steer([trigger], ops, {}, None, policy)
    after = pairs(_graphs(policy, ops2, rows))
    assert ("Add", "float64") not in after and ("Add", "float32") in after, sorted(after)
    assert notes == ["Add(float64,float64)"]
    # a file entry's dtype leaves out every row with it; an op left with no row is left out
    ops3, rows3, _, _ = steer([{"bug": "k", "op": "Relu", "dtypes": None, "dtype": "float32", "spelling": []},
                               {"bug": "k", "op": "Relu", "dtypes": None, "dtype": "float64", "spelling": []}],
                              ops, {}, None, policy)
    assert "Relu" not in {c.name for c in ops3} and not rows3["Relu"]


def test_steering_avoids_a_triggers_spelling_and_the_record_replays_it():
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.generate.policy import GenPolicy
    from nnfuzz.generate.steer import steer
    from nnfuzz.materialize.model import build_model
    from nnfuzz.materialize.onnx.spec import ExportSpec

    policy = GenPolicy(max_nodes=3, dtypes=["float32"], include=["Reshape", "Relu"], guide="none")
    ops = select_ops(policy)
    trigger = {"bug": "k", "op": "Reshape", "dtypes": None, "dtype": None, "spelling": [("shape", "computed")]}
    _, rows, spec, _ = steer([trigger], ops, {}, ExportSpec(opset=17), policy)
    assert spec.avoid == (("Reshape", "shape", "computed"),) and rows == {}
    shapes = {False: set(), True: set()}
    for gir in _graphs(policy, ops, {}, 12):
        for steered in (False, True):
            model = build_model(gir, 3, export=(spec if steered else ExportSpec(opset=17)).for_model(3))
            op_of = {i.outputs[0]: i.op.name for i in gir.insts}
            shapes[steered] |= {s.get("shape") for v, s in model.spellings.items() if op_of.get(v) == "Reshape"}
    assert "computed" in shapes[False] and shapes[True] == {"constant"}, shapes
    assert ExportSpec.from_json(spec.record({})).avoid == spec.avoid  # meta.json's export keeps it
    # a spelling with no op named: every op avoids it
    _, _, every, notes = steer([{**trigger, "op": "*"}], ops, {}, ExportSpec(opset=17), policy)
    assert every.avoid == (("*", "shape", "computed"),) and notes == ["every op spelled shape=computed"]
    for gir in _graphs(policy, ops, {}, 12):
        model = build_model(gir, 3, export=every.for_model(3))
        assert all(s.get("shape") in (None, "constant") for s in model.spellings.values()), model.spellings
