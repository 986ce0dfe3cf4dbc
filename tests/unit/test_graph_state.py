"""The generator's incremental bookkeeping agrees with the whole-graph definitions it replaces: value
ranges updated in the backward insertion's cone equal a from-scratch analysis, descendants equal the
fixed point over all instructions, candidates equal a scan of every var, and the topological sort takes
the earliest ready instruction at each step."""
import dataclasses

import pytest

from nnfuzz.abstract.ranges import for_dtype, quiet_numpy
from nnfuzz.errors import InternalError
from nnfuzz.generate import GenPolicy
from nnfuzz.generate.graph_state import topological_order
from nnfuzz.generate.opset import select_ops
from nnfuzz.generate.symbolic import GraphGenerator
from nnfuzz.gir import Inst


class _StopBeforeFinalize(Exception):
    pass


def _built(seed: int, nodes: int = 30) -> GraphGenerator:
    """A generator with its graph built but not finalised (its working state kept)."""
    policy = GenPolicy(max_nodes=nodes, seed=seed)
    gen = GraphGenerator(policy, select_ops(policy))

    def stop():
        raise _StopBeforeFinalize

    gen._finalize = stop
    with pytest.raises(_StopBeforeFinalize):
        gen.generate()
    return gen


def _ranges_from_scratch(gen: GraphGenerator) -> dict:
    ranges = {p: for_dtype(gen.vars[p].dtype) for p in gen.placeholders}
    with quiet_numpy():
        for inst in topological_order(gen.insts, set(gen.placeholders)):
            assert gen._range_step(inst, ranges), f"{inst.op!r} infeasible in a committed graph"
    return ranges


@pytest.mark.parametrize("seed", range(6))
def test_incremental_state_matches_whole_graph_definitions(seed):
    gen = _built(seed)
    assert gen.stats["backward"] > 0, "the seed must exercise backward insertion (the cone update)"
    full = _ranges_from_scratch(gen)
    for inst in gen.insts:
        for v in inst.outputs:
            assert gen._range_of(v) == full[v], f"seed {seed}: {v} ({inst.op!r})"
    for var in list(gen.vars)[::3]:
        fixpoint, changed = {var}, True
        while changed:
            changed = False
            for inst in gen.insts:
                if any(v in fixpoint for v in inst.inputs) and not set(inst.outputs) <= fixpoint:
                    fixpoint.update(inst.outputs)
                    changed = True
        assert gen._descendants(var) == fixpoint
    kinds = {(t.dtype, t.ndims) for t in gen.vars.values()}
    assert gen._kinds() == kinds
    for dtype, rank in kinds:
        for viable in ((rank,), (0, 1, 2, 3, 4, 5)):
            want = [v for v, t in gen.vars.items() if t.dtype == dtype and t.ndims in viable]
            assert gen._candidates(dtype, viable) == want


def testtopological_order_takes_the_earliest_ready_instruction():
    ops = select_ops(GenPolicy(include=["Relu"]))
    relu = ops[0]()
    insts = [Inst(relu, ["b"], ["c"]), Inst(relu, ["a"], ["b"]), Inst(relu, ["a"], ["d"]), Inst(relu, ["c"], ["e"])]
    order = topological_order(insts, {"a"})
    assert [i.outputs[0] for i in order] == ["b", "c", "d", "e"]
    with pytest.raises(InternalError, match="cycle or an undefined input"):
        topological_order(insts, set())


def test_same_seed_same_graph_after_other_generation():
    """Caches shared by a process's generators never change what a seed gives."""
    p = GenPolicy(max_nodes=12, seed=7)
    ops = select_ops(p)
    first = GraphGenerator(p, ops).generate().dumps()
    for s in range(20):
        GraphGenerator(dataclasses.replace(p, seed=100 + s, max_nodes=30, dtypes=["float32", "int64"]),
                       select_ops(dataclasses.replace(p, dtypes=["float32", "int64"]))).generate()
    assert GraphGenerator(p, ops).generate().dumps() == first
