"""Small GraphIRs for tests: a chain of one-input ops over one input, and a two-input graph with a shape family."""
from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.gir import GraphIR, Inst, ShapeFamily


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


def dynamic_graph() -> GraphIR:
    """sigmoid(a + b) over a[n, m] and b[n, m] (one symbol pair shared by both inputs), at three shapes."""
    from nnfuzz.ops.binary.spec import Add
    from nnfuzz.ops.elementwise.spec import Sigmoid

    t = AbsTensor([4, 3], DType.float32)
    g = GraphIR(vars={"a": t, "b": t, "v0": t, "v1": t}, inputs=["a", "b"],
                insts=[Inst(Add(), ["a", "b"], ["v0"]), Inst(Sigmoid(), ["v0"], ["v1"])], outputs=["v1"])
    g.family = ShapeFamily({"a": ["n", "m"], "b": ["n", "m"]}, [{"n": 4, "m": 3}, {"n": 1, "m": 1}, {"n": 128, "m": 5}])
    return g.check()


def dynamic_payload(built, fmt: str) -> bytes:
    """A dynamic model built by materialize.dynamic.build_dynamic as a sandbox takes it: its ONNX bytes
    (``fmt`` "onnx"), else its GraphIR with the shape family, packed."""
    from nnfuzz.materialize.portable import pack

    if fmt == "onnx":
        return built.onnx.SerializeToString()
    gir = GraphIR.loads(built.model.gir.dumps())
    gir.family = built.family
    return pack(gir.dumps(), built.model.weights)
