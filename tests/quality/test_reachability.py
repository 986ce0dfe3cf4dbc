"""Every registered operator is reachable: over 1,000 generated graphs each op appears at least once, with
the op set of campaigns on ONNX systems (ops with a torch and an ONNX lowering: every builtin one)."""
import collections

from nnfuzz.generate import GenPolicy
from nnfuzz.generate.opset import select_ops, usable_with
from nnfuzz.generate.symbolic import GraphGenerator


def test_every_op_appears_in_1000_graphs():
    policy = GenPolicy(max_nodes=10)
    every = [c for c in select_ops(policy) if c.__module__.startswith("nnfuzz.")]
    ops = [c for c in select_ops(policy, usable=usable_with({"torch"}, "onnx")) if c.__module__.startswith("nnfuzz.")]
    assert {c.name for c in every} == {c.name for c in ops}, "builtin ops without an ONNX or torch lowering"
    seen = collections.Counter()
    for seed in range(1000):
        seen.update(GraphGenerator(GenPolicy(max_nodes=10, seed=seed), ops).generate().op_names())
    missing = sorted(c.name for c in ops if seen[c.name] == 0)
    assert not missing, f"never generated in 1000 graphs: {missing}"
    rare = sorted((n, seen[n]) for n in (c.name for c in ops) if seen[n] < 5)
    print(f"\n{len(ops)} ops, {sum(seen.values())} instances; rarest: {rare[:10]}")
