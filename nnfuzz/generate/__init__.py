"""Random valid graph generation: GenPolicy + seed -> GraphIR."""
from __future__ import annotations

from typing import List, Optional

from nnfuzz.generate.policy import GenPolicy


def generate_graph(policy: GenPolicy, ops: Optional[List[type]] = None, seed: Optional[int] = None):
    """One concrete GraphIR from ``policy`` (its seed unless ``seed`` is given)."""
    import dataclasses

    from nnfuzz.generate.opset import select_ops
    from nnfuzz.generate.symbolic import GraphGenerator

    if seed is not None:
        policy = dataclasses.replace(policy, seed=seed)
    return GraphGenerator(policy, ops if ops is not None else select_ops(policy)).generate()


__all__ = ["GenPolicy", "generate_graph"]
