"""Coverage guidance (generate/guide.py, fuzz/guidestate.py): draws lean toward uncovered op x dtype rows,
ops and edges and away from known bugs' triggers, measurably over many seeded graphs, and never to
zero; the state round-trips through guide_state.json, and a corrupt file is a clear error that changes
nothing."""
import dataclasses
import json
from collections import Counter

import pytest

from nnfuzz.errors import ConfigError
from nnfuzz.fuzz.guidestate import FILE, GuideStateError, load_state, save_state, triggers_of
from nnfuzz.generate.guide import FLOOR, MAX_BINS, MIN_FACTOR, Guide, GuideState, compact_bin, graph_coverage
from nnfuzz.generate.opset import select_ops
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.generate.symbolic import GraphGenerator

POLICY = GenPolicy(max_nodes=6, include=["Relu", "Sigmoid", "Tanh", "Add", "Mul"], dtypes=["float32", "float64"])
GRAPHS = 120


def _census(state, policy=POLICY, graphs=GRAPHS):
    """(op counts, input dtype counts) over ``graphs`` seeded graphs drawn with a fixed ``state``."""
    ops = select_ops(policy)
    guide = Guide(state) if state is not None else None
    by_op, by_dtype = Counter(), Counter()
    for seed in range(graphs):
        gir = GraphGenerator(dataclasses.replace(policy, seed=seed), ops, guide=guide).generate()
        for key, n in graph_coverage(gir)["op_dtype"].items():
            by_op[key[0]] += n
            by_dtype[key[1][0]] += n
    return by_op, by_dtype


def _covered(op_dtypes, uses=0):
    s = GuideState()
    s.add({"op_dtype": Counter({k: max(1, uses) for k in op_dtypes})})
    return s


def _share(c: Counter, key) -> float:
    return c[key] / sum(c.values())


def test_draws_lean_toward_uncovered_dtype_rows():
    every_f32 = [(op, ("float32",) * n) for op, n in [("Relu", 1), ("Sigmoid", 1), ("Tanh", 1), ("Add", 2), ("Mul", 2)]]
    _, plain = _census(None)
    _, guided = _census(_covered(every_f32))
    assert _share(guided, "float64") > _share(plain, "float64") + 0.1, (plain, guided)


def test_draws_lean_toward_ops_with_uncovered_rows_and_away_from_known_bugs():
    rows = [(op, (dt,) * n) for op, n in [("Relu", 1), ("Sigmoid", 1), ("Add", 2), ("Mul", 2)]
            for dt in ("float32", "float64")]
    plain, _ = _census(None)
    guided, _ = _census(_covered(rows))  # Tanh alone has uncovered rows
    assert _share(guided, "Tanh") > _share(plain, "Tanh") + 0.04, (plain, guided)  # ~4 sigma over 720 draws

    state = GuideState()
    state.add_trigger({"bug": "0000", "op": "Tanh", "dtypes": None, "bin": None, "signature": "s", "from": "localized"})
    state.add_trigger({"bug": "0001", "op": "Add", "dtypes": ["float32", "float32"], "bin": None, "signature": "t",
                       "from": "reduced"})
    bugs, bug_dtypes = _census(state)
    assert 0 < bugs["Tanh"] and _share(bugs, "Tanh") < _share(plain, "Tanh") / 2, (plain, bugs)
    g = Guide(state)
    assert g.row_factor("Add", _dtypes("float32", "float32")) < g.row_factor("Add", _dtypes("float64", "float64"))


def _dtypes(*names):
    from nnfuzz.abstract.dtype import DType

    return tuple(DType(n) for n in names)


def test_factors_never_reach_zero():
    ops = select_ops(POLICY)
    state = GuideState()
    gir = GraphGenerator(dataclasses.replace(POLICY, seed=1), ops).generate()
    for _ in range(50):
        state.add(graph_coverage(gir))
    for k in range(5):  # several triggers on one op: the factor stops at MIN_FACTOR
        state.add_trigger({"bug": f"{k:04d}", "op": "Relu", "dtypes": None, "bin": None, "signature": None, "from": "x"})
    g = Guide(state)
    gen = GraphGenerator(dataclasses.replace(POLICY, seed=0), ops, guide=g)
    factors = g.op_factors(gen.ops, gen._rows)
    assert min(factors.values()) >= MIN_FACTOR > 0 and factors[next(c for c in ops if c.name == "Relu")] == MIN_FACTOR
    assert g.row_factor("Relu", _dtypes("float32")) == MIN_FACTOR
    assert g.edge_factor("Relu", "Relu") >= FLOOR and g.edge_factor(None, "Add") == FLOOR


def test_same_seed_and_state_give_the_same_graph_and_unguided_is_unchanged():
    ops = select_ops(POLICY)
    state = _covered([("Relu", ("float32",))])
    one = GraphGenerator(dataclasses.replace(POLICY, seed=5), ops, guide=Guide(state)).generate().dumps()
    two = GraphGenerator(dataclasses.replace(POLICY, seed=5), ops, guide=Guide(state)).generate().dumps()
    assert one == two
    off = dataclasses.replace(POLICY, seed=5, guide="none")
    assert GraphGenerator(off, ops, guide=Guide(state)).generate().dumps() == \
        GraphGenerator(off, ops).generate().dumps()
    with pytest.raises(ConfigError, match="mgen.guide='often'.*coverage"):
        GenPolicy(guide="often")


def test_state_round_trips_through_its_file(tmp_path):
    ops = select_ops(GenPolicy(max_nodes=8, include=["Conv2d", "ConstantPad", "Relu", "Concat"]))
    state = GuideState()
    for seed in range(6):
        state.add(graph_coverage(GraphGenerator(GenPolicy(max_nodes=8, seed=seed, include=["Conv2d", "ConstantPad", "Relu",
                                                                                            "Concat"]), ops).generate()))
    state.add_trigger({"bug": "0003", "op": "Pad", "dtypes": ["float32"], "bin": [[4], [["mode", "constant"]]],
                       "signature": "crash/x", "from": "reduced"})
    save_state(tmp_path, state)
    back = load_state(tmp_path)
    assert back.counts == state.counts and back.triggers == state.triggers and back.graphs == state.graphs == 6
    assert all(isinstance(op, str) and isinstance(h, int) for op, h in back.counts["op_shape"])
    assert load_state(tmp_path / "fresh").sizes() == {"op_dtype": 0, "op_shape": 0, "edges": 0, "graphs": 0}


def test_a_version_1_state_is_read_with_its_shape_bins_compacted(tmp_path):
    key = ("Conv2d", (4, 4), (("stride", ("+0", "+1")), ("padding", "same")))
    (tmp_path / FILE).write_text(json.dumps({"version": 1, "graphs": 3, "op_dtype": [["Relu", ["float32"], 2]],
                                             "op_shape": [["Conv2d", [4, 4], [["stride", ["+0", "+1"]], ["padding", "same"]], 5]],
                                             "edges": [["Relu", "Conv2d", 1]], "triggers": []}))
    state = load_state(tmp_path)
    assert dict(state.counts["op_shape"]) == {compact_bin(key): 5} and state.graphs == 3
    # the key a graph gives now is the one read back: a graph with that Conv2d bin adds nothing new
    assert state.add({"op_shape": Counter({compact_bin(key): 1})})["op_shape"] == []
    save_state(tmp_path, state)
    assert json.loads((tmp_path / FILE).read_text())["version"] == 2 and load_state(tmp_path).counts == state.counts


def test_an_ops_shape_bins_stop_at_their_bound():
    state = GuideState()
    new = state.add({"op_shape": Counter({("Add", h): 1 for h in range(MAX_BINS + 40)} | {("Mul", 1): 1})})
    assert len(new["op_shape"]) == MAX_BINS + 1 and len(state.covered("Add")["bins"]) == MAX_BINS
    assert state.sizes()["op_shape"] == MAX_BINS + 1 and state.covered("Mul")["bins"] == {1}
    assert state.add({"op_shape": Counter({("Add", 0): 2})})["op_shape"] == [] and state.counts["op_shape"][("Add", 0)] == 3


@pytest.mark.parametrize("text", ["{not json", json.dumps({"version": 1, "graphs": 2, "op_dtype": [["Relu"]],
                                                                "op_shape": [], "edges": [], "triggers": []})])
def test_a_corrupt_state_file_is_a_clear_error_that_changes_nothing(tmp_path, text):
    (tmp_path / FILE).write_text(text)
    with pytest.raises(GuideStateError, match=f"{FILE}.*mv .*mgen.guide=none"):
        load_state(tmp_path)
    assert (tmp_path / FILE).read_text() == text


def test_a_saved_bug_names_its_localized_node_as_the_trigger(tmp_path):
    from nnfuzz.triage.meta import BugMeta

    ops = select_ops(POLICY)
    gir = GraphGenerator(dataclasses.replace(POLICY, seed=3), ops).generate()
    folder = tmp_path / "0007"
    folder.mkdir()
    (folder / "gir.json").write_text(gir.dumps())
    meta = BugMeta(system="ort-cpu", symptom="inconsistency", first_divergent_node={"index": 1, "op": "?"},
                   signature="inconsistency/x")
    (folder / "meta.json").write_text(json.dumps(meta.to_json()))
    [t] = triggers_of(folder, None, "localized")
    inst = gir.insts[1]
    assert (t["bug"], t["op"], t["dtypes"], t["signature"]) == \
        ("0007", inst.op.name, [gir.vars[v].dtype.value for v in inst.inputs], "inconsistency/x")


def test_the_state_file_is_written_at_most_once_a_minute_and_at_the_end(tmp_path, monkeypatch):
    """Written every LOG_EVERY tests, the whole state (4.9 MB at minute 27 of an ort-cpu soak) went to disk every
    2 s; the log line stays per LOG_EVERY tests."""
    from nnfuzz.fuzz import guidestate as gs

    lines, saves, now = [], [], [1000.0]
    monkeypatch.setattr(gs.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(gs, "save_state", lambda out, state: saves.append(now[0]))
    g = gs.CampaignGuide(tmp_path, type("Log", (), {"write": lambda self, r: lines.append(r)})(), True)
    for k in range(1, 31):  # 3000 tests over 90 s
        now[0] += 3.0
        g.tick(100 * k, 3.0 * k)
    assert len(lines) == 30 and saves == [1060.0]
    g.tick(3000, 90.0, force=True)
    assert saves == [1060.0, 1090.0] and len(lines) == 31


def test_the_file_is_written_a_row_at_a_time_as_the_state_reads_it(tmp_path):
    import io

    state = GuideState()
    state.add({"op_dtype": Counter({("Relu", ("float32",)): 3, ("Add", ("int8", "int8")): 1}),
               "op_shape": Counter({("Relu", 7): 2}), "edges": Counter({("Relu", "Add"): 1})})
    state.add_trigger({"bug": "0007", "op": "Add", "dtypes": None, "bin": [], "signature": 'a "quoted" \\ one',
                       "from": "saved"})
    f = io.StringIO()
    state.write_json(f)
    assert json.loads(f.getvalue()) == json.loads(json.dumps(state.to_json()))
    empty = io.StringIO()
    GuideState().write_json(empty)
    assert GuideState.from_json(json.loads(empty.getvalue())).sizes() == GuideState().sizes()
