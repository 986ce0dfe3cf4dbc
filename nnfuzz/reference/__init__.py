"""A numpy reference interpreter: one small, readable ``eval`` per abstract operator.

It computes what each operator is specified to compute, with numpy, and says which side of a
disagreement between the reference framework (torch) and a system under test is wrong. Floats are
computed in float64 and rounded once to the output dtype (the answer a correctly rounded
implementation would give); integers wrap in their own dtype; bools are bools.

    from nnfuzz.reference import evaluate
    values = evaluate(gir, weights, inputs)       # every var of the graph, by name

Register an eval for your own operator with ``@evaluates(MyOp)`` (``nnfuzz.reference.registry``).
"""
from nnfuzz.reference.registry import eval_for, eval_op, evaluate, evaluates  # noqa: F401
