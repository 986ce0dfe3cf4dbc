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
    # plus, for an op none of whose rows from ``dtype`` stays within these, the other dtypes of those rows
    # (DequantizeLinear: int8 -> float32)
    base = {dtype.value, "bool", "int64"}
    rows = [{d.value for d in i + o} for i, o in zip(cls.in_dtypes, cls.out_dtypes) if i and i[0] is dtype]
    rows = set().union(*rows) if rows and not any(r <= base for r in rows) else set()
    for seed in seeds:
        policy = GenPolicy(seed=seed, max_nodes=1, include=[cls.name], max_elems=256,
                           dtypes=sorted(base | rows))
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


COMMON_OPS = ["Add", "Sub", "Mul", "Relu", "Sigmoid", "Tanh", "Conv2d", "MatMul", "MaxPool2d", "Transpose",
              "Reshape", "Concat"]


def safe_model(seed, include=COMMON_OPS, dtypes=("float32",), max_nodes=6, max_elems=1024, export=True):
    """A small generated model over ``include`` with safe values (a defined reference): what the backend
    tests run on each system."""
    gir = generate_graph(GenPolicy(seed=seed, max_nodes=max_nodes, include=list(include), dtypes=list(dtypes),
                                   max_elems=max_elems))
    model = build_model(gir, seed, export=export, search=SearchConfig())
    assert model.oracle.output is not None, f"seed {seed}: the value search found no safe values"
    return model


def onnx_model(op, inputs, outputs, opset=17, **attrs) -> bytes:
    """A one-node ONNX model: ``inputs``/``outputs`` are (name, TensorProto type, shape)."""
    from onnx import helper

    g = helper.make_graph([helper.make_node(op, [n for n, _, _ in inputs], [n for n, _, _ in outputs], **attrs)],
                          op.lower(), [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8).SerializeToString()
