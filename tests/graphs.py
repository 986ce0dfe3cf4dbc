"""Small GraphIRs for tests: a chain of one-input ops over one input."""
from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.gir import GraphIR, Inst


def chain(*ops, shape=(6,), dtype=DType.float32) -> GraphIR:
    """x -> ops[0] -> ops[1] -> ... (vars v0, v1, ...), the last var the output."""
    g = GraphIR()
    g.vars["x"] = AbsTensor(list(shape), dtype)
    g.inputs, prev = ["x"], "x"
    for k, op in enumerate(ops):
        out = f"v{k}"
        g.vars[out] = op.checked_type_transfer([g.vars[prev]])[0]
        g.insts.append(Inst(op, [prev], [out]))
        prev = out
    g.outputs = [prev]
    return g.check()
