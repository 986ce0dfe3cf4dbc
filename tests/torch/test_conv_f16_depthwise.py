"""torch 2.13's CPU float16 depthwise conv never returns for some shapes (oneDNN's brdgmm kernel); value-aware
generation ran it and a campaign's producer hung. The lowering computes those in float32, rounded once."""
import numpy as np

from nnfuzz.abstract import OP_REGISTRY, AbsTensor, DType
from nnfuzz.abstract.op import load_builtin_ops
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.model import build_model
from nnfuzz.reference import evaluate

load_builtin_ops()


def test_the_float16_depthwise_conv_that_hung_torch_is_computed():
    op = OP_REGISTRY["Conv1d"](1, 43, 1, 9)  # stride 1, padding 43, dilation 1, 9 groups
    g = GraphIR()
    g.vars.update(x=AbsTensor([1, 9, 1], DType.float16), w=AbsTensor([9, 1, 40], DType.float16))
    g.inputs, g.weights = ["x"], ["w"]
    g.vars["v0"] = op.checked_type_transfer([g.vars["x"], g.vars["w"]])[0]
    g.insts.append(Inst(op, ["x", "w"], ["v0"]))
    g.outputs = ["v0"]
    g.check()
    model = build_model(g, 0, export=False)  # (ran forever before the fix)
    got = model.oracle.output["v0"]
    want = evaluate(g, model.weights, model.oracle.input)["v0"]
    assert got.shape == want.shape == (1, 9, 48) and got.dtype == np.float16
    # both compute in a wider dtype and round once: at most one float16 rounding apart
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2 ** -10, atol=1e-3)
