"""Property: for random valid attributes and shapes, each op's type_transfer matches torch eager.

Hypothesis draws generator seeds; a graph restricted to one op yields random valid instances of it
(attributes binned, solved by Z3). ``build_model`` runs each instruction through its torch lowering
and raises OpDefinitionError naming the op when shape or dtype disagree with type_transfer.
"""
import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnfuzz.abstract import load_builtin_ops
from nnfuzz.generate import GenPolicy
from nnfuzz.generate.symbolic import GraphGenerator
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.torch.lowering import has_torch_lowering

OPS = sorted((c for c in load_builtin_ops().values() if has_torch_lowering(c) and c.__module__.startswith("nnfuzz.")),
             key=lambda c: c.name)


@pytest.mark.parametrize("cls", OPS, ids=lambda c: c.name)
@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**31 - 1))
def test_type_transfer_matches_torch(cls, seed):
    policy = dataclasses.replace(GenPolicy(), max_nodes=3, seed=seed, max_attempts=200)
    gir = GraphGenerator(policy, [cls]).generate()
    assert set(gir.op_names()) == {cls.name}
    build_model(gir, seed, export=False)
