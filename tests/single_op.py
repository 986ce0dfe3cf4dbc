"""Single-op graphs of one op with a given first-input dtype and safe values (the value search): the
cases on which the numpy reference and the TF lowerings are checked against the torch lowerings."""
from __future__ import annotations

from nnfuzz.errors import ConstraintError
from nnfuzz.generate import generate_graph
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.search import SearchConfig


def single_op_models(cls, dtype, seeds=range(40)):
    """Yield (gir, model) for seeds whose one-node graph has a ``dtype`` first input and defined outputs."""
    for seed in seeds:
        policy = GenPolicy(seed=seed, max_nodes=1, include=[cls.name], max_elems=256,
                           dtypes=sorted({dtype.value, "bool", "int64"}))
        try:
            gir = generate_graph(policy)
        except ConstraintError:
            continue
        (inst,) = gir.insts
        if gir.vars[inst.inputs[0]].dtype is not dtype:
            continue
        model = build_model(gir, seed, export=False, search=SearchConfig(time_ms=300))
        if model.oracle.output is None:
            continue  # no safe values found: undefined, nothing to compare
        yield gir, model
