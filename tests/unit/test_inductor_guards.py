"""Recompilations no guard asks for (nnfuzz/backends/inductor_guards.py): a call that differs from one
already served only in unbacked sizes must reuse a graph; where a backed size changed it may not."""
from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.backends.inductor_guards import Recompiles, symbol_sizes
from nnfuzz.gir import GraphIR, Inst, ShapeFamily
from nnfuzz.ops.binary.spec import Add


def _graph():
    a, b = AbsTensor([2, 3], DType.float32), AbsTensor([1, 3], DType.float32)
    g = GraphIR(vars={"a": a, "b": b, "y": Add().checked_type_transfer([a, b])[0]}, inputs=["a", "b"],
                insts=[Inst(Add(), ["a", "b"], ["y"])], outputs=["y"]).check()
    g.family = ShapeFamily({"a": ["n", "m"], "b": [None, "m"]}, [{"n": 2, "m": 3}, {"n": 5, "m": 3}, {"n": 5, "m": 7}])
    return g


def test_sizes_are_read_from_each_inputs_symbolic_axes():
    assert symbol_sizes(_graph(), [(5, 7), (1, 7)]) == {"n": 5, "m": 7}


def test_a_recompile_where_only_unbacked_sizes_changed_is_the_fault():
    r = Recompiles(_graph(), {"n"}, [(2, 3), (1, 3)])
    r.called([(2, 3), (1, 3)], False)   # shape 0: served by the compile's graph
    r.called([(5, 3), (1, 3)], True)    # shape 1: n changed, and n is unbacked
    assert r.fault == {"shape": 1, "why": "recompiled for sizes {m=3, n=5}, which differ from sizes {m=3, n=2}, "
                                          "already served, only in unbacked n: no guard holds them"}
    r.called([(9, 3), (1, 3)], True)    # (not followed after a recompilation)
    assert r.fault["shape"] == 1


def test_a_recompile_where_a_backed_size_changed_is_not():
    r = Recompiles(_graph(), {"n"}, [(2, 3), (1, 3)])
    r.called([(2, 3), (1, 3)], False)
    r.called([(2, 7), (1, 7)], True)    # m is backed: a guard on it may fail
    assert r.fault is None


def test_after_a_recompilation_no_call_is_known_to_be_the_first_graphs():
    """The campaign's false alarm (inductor-cpu, seed 1): the all-1 shape recompiled (a backed size became
    1), and the next shape, differing from it only in an unbacked size, recompiled too: the second graph was
    compiled for unmarked inputs, where that size is backed and its 1 specialized. Only the first graph's
    calls witness a recompilation no guard asks for."""
    r = Recompiles(_graph(), {"n"}, [(2, 3), (1, 3)])
    r.called([(2, 3), (1, 3)], False)
    r.called([(1, 7), (1, 7)], True)    # m changed (backed): a second graph, where n = 1 is specialized
    r.called([(8, 7), (1, 7)], True)    # differs from the call before only in n, but that call was the second graph's
    assert r.fault is None
    r.called([(9, 3), (1, 3)], True)    # differs from the first graph's calls only in n: still not judged, since
    assert r.fault is None              # the calls after a recompilation are not followed


def test_without_unbacked_sizes_no_recompile_is_judged():
    r = Recompiles(_graph(), set(), [(2, 3), (1, 3)])
    r.called([(5, 3), (1, 3)], True)
    assert r.fault is None
