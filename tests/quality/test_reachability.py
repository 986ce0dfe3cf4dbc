"""Every registered operator is reachable: over 1,000 generated graphs each op appears at least once."""
import collections

from nnfuzz.generate import GenPolicy
from nnfuzz.generate.opset import select_ops
from nnfuzz.generate.symbolic import GraphGenerator
from nnfuzz.materialize.torch.lowering import has_torch_lowering


def test_every_op_appears_in_1000_graphs():
    policy = GenPolicy(max_nodes=10)
    ops = [c for c in select_ops(policy, usable=has_torch_lowering) if c.__module__.startswith("nnfuzz.")]
    seen = collections.Counter()
    for seed in range(1000):
        seen.update(GraphGenerator(GenPolicy(max_nodes=10, seed=seed), ops).generate().op_names())
    missing = sorted(c.name for c in ops if seen[c.name] == 0)
    assert not missing, f"never generated in 1000 graphs: {missing}"
    rare = sorted((n, seen[n]) for n in (c.name for c in ops) if seen[n] < 5)
    print(f"\n{len(ops)} ops, {sum(seen.values())} instances; rarest: {rare[:10]}")
