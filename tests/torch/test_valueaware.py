"""Value-aware generation: graphs grown with safe values, insertions repaired or undone."""
import types

import numpy as np

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.gir import Inst
from nnfuzz.materialize.search import SearchConfig, search_values
from nnfuzz.generate.valueaware import ValueTracker, generate_with_values
from nnfuzz.ops.elementwise import spec as E


def test_grown_graphs_are_safe_on_their_values_and_checked_once():
    for seed in range(6):
        gir, weights, inputs, stats = generate_with_values(GenPolicy(seed=seed, max_nodes=20))
        assert gir.n_nodes == 20 and stats.checks >= gir.n_nodes
        assert set(weights) == set(gir.weights) and set(inputs) == set(gir.inputs)
        res = search_values(gir, weights, inputs, SearchConfig(), seed)
        assert res.ok and res.passes == 1 and res.steps == 0, (seed, res.summary())


def test_same_seed_same_graph_and_values():
    a = generate_with_values(GenPolicy(seed=7, max_nodes=15))
    b = generate_with_values(GenPolicy(seed=7, max_nodes=15))
    assert a[0].dumps() == b[0].dumps()
    for x, y in ((a[1], b[1]), (a[2], b[2])):
        assert list(x) == list(y)
        for k in x:
            assert x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k])


def fake_generator():
    """The generator state ValueTracker reads (vars, placeholders, insts, ranges), one placeholder p."""
    return types.SimpleNamespace(vars={"p": AbsTensor([8], DType.float32)}, placeholders=["p"], insts=[], ranges={})


def insert(gen, tracker, op, ins, out) -> bool:
    """A forward insertion as the generator makes it, then the hook's verdict (undone when False, as
    GraphState._commit undoes it: the graph by the generator, the values by the tracker)."""
    snap = tracker.snapshot()
    (t,) = op.checked_type_transfer([gen.vars[v] for v in ins])
    gen.vars[out] = t
    gen.insts.append(Inst(op, list(ins), [out]))
    ok = tracker.accept(gen)
    if not ok:
        tracker.restore(snap)
        gen.insts.pop()
        del gen.vars[out]
    return ok


def test_an_unsafe_insertion_is_repaired_from_the_current_values():
    """log(relu(p)): relu leaves zeros for the negative half of p; nothing new to re-draw, so the search
    moves p until every relu(p) is a safe log argument."""
    gen, tracker = fake_generator(), ValueTracker(SearchConfig(), seed=0, repair_passes=60)
    assert insert(gen, tracker, E.Relu(), ["p"], "r")
    assert (tracker.inputs["p"] < 0).any(), "the seed should start with negatives"
    assert insert(gen, tracker, E.Log(), ["r"], "l")
    assert tracker.stats.repairs == 1 and tracker.stats.rejected == 0
    assert (tracker.inputs["p"] > 0).all()
    assert np.isfinite(tracker.env["l"].numpy()).all()


def test_an_insertion_without_safe_values_is_undone():
    """log(-relu(p)) has no safe value: the insertion is rejected and the graph and values are as before."""
    gen, tracker = fake_generator(), ValueTracker(SearchConfig(), seed=0, repair_passes=20)
    assert insert(gen, tracker, E.Relu(), ["p"], "r")
    assert insert(gen, tracker, E.Neg(), ["r"], "n")
    before = tracker.inputs["p"].copy()
    assert not insert(gen, tracker, E.Log(), ["n"], "l")
    assert tracker.stats.rejected == 1
    assert [i.outputs for i in gen.insts] == [["r"], ["n"]] and "l" not in gen.vars and "l" not in tracker.env
    np.testing.assert_array_equal(tracker.inputs["p"], before)


def new_placeholder(gen, name, n):
    gen.placeholders.append(name)
    gen.vars[name] = AbsTensor([n], DType.float32)


def test_a_new_placeholder_is_drawn_inside_its_consumers_domain():
    """sqrt(q), acos(r): their new placeholders are drawn positive and inside (-1, 1) at once."""
    gen, tracker = fake_generator(), ValueTracker(SearchConfig(), seed=3, repair_passes=0)
    new_placeholder(gen, "q", 64)
    assert insert(gen, tracker, E.Sqrt(), ["q"], "s")
    new_placeholder(gen, "r", 64)
    assert insert(gen, tracker, E.Acos(), ["r"], "a")
    assert (tracker.stats.redraws, tracker.stats.repairs) == (0, 0)
    assert (tracker.inputs["q"] > 0).all() and (np.abs(tracker.inputs["r"]) < 1).all()


def test_a_new_placeholder_is_redrawn_before_the_search_is_asked():
    """tan(q) near its poles: no domain to draw inside, but a re-draw (other scales) avoids them."""
    gen, tracker = fake_generator(), ValueTracker(SearchConfig(), seed=1, repair_passes=0)
    new_placeholder(gen, "q", 256)
    assert insert(gen, tracker, E.Tan(), ["q"], "t")
    assert tracker.stats.redraws == 1 and tracker.stats.repairs == 0
    assert (np.abs(np.cos(tracker.inputs["q"].astype(np.float64))) >= 1e-2).all()


def test_in_domain_draws_satisfy_every_builtin_domain():
    """Every domain an op states, for each dtype it could be drawn in: the moved values are inside it."""
    from nnfuzz.abstract import OP_REGISTRY
    from nnfuzz.materialize.values import in_domain

    doms = {d for cls in OP_REGISTRY.values() for d in getattr(cls, "domains", {}).values()}
    assert len(doms) >= 5
    v = np.random.default_rng(0).standard_normal(1000) * 20
    for dom in doms:
        for dt in (DType.float16, DType.float32, DType.float64, DType.int8, DType.int32, DType.uint8):
            if dt is DType.uint8 and dom.hi < 0:
                continue
            x = in_domain(v, dom, dt).astype(np.float64)
            assert x.dtype == np.float64 and np.isfinite(x).all()
            assert (x > dom.lo if dom.lo_open else x >= dom.lo).all(), (dom, dt)
            assert (x < dom.hi if dom.hi_open else x <= dom.hi).all(), (dom, dt)
            if dom.nonzero:
                assert (x != 0).all(), (dom, dt)


def test_in_domain_keeps_a_0d_value_an_array():
    """A 0-d input moved into a domain stays an ndarray (numpy arithmetic on 0-d arrays gives scalars, and
    a bug folder's oracle.pkl holds arrays only: a campaign saved an unreadable folder before)."""
    from nnfuzz.abstract import OP_REGISTRY
    from nnfuzz.materialize.values import in_domain

    for dom in {d for cls in OP_REGISTRY.values() for d in getattr(cls, "domains", {}).values()}:
        for dt in (DType.float32, DType.int32):
            out = in_domain(np.asarray(np.float64(3.5)), dom, dt)
            assert isinstance(out, np.ndarray) and out.shape == (), (dom, dt, type(out))
