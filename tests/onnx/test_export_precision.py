"""Exported models compute what the torch reference computes, to the last bits where an exporter
shortcut would otherwise show up downstream as a false bug of the system under test."""
import numpy as np
import pytest

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.model import build_model

ort = pytest.importorskip("onnxruntime")


def test_float64_log2_of_powers_of_two_is_exact_in_ort():
    """torch.onnx writes log2 as Log(x) / ln2 with ln2 rounded to float32 (log2(4) = 1.99999999 in ORT,
    and Floor after it gives 1): nnfuzz's lowering divides by an exact float64 ln2 instead."""
    g = GraphIR()
    g.vars["x"] = AbsTensor([4], DType.float64)
    g.vars["y"] = AbsTensor([4], DType.float64)
    g.vars["z"] = AbsTensor([4], DType.float64)
    g.inputs, g.outputs = ["x"], ["z"]
    g.insts = [Inst(E.Log2(), ["x"], ["y"]), Inst(E.Floor(), ["y"], ["z"])]
    x = np.array([4.0, 8.0, 1024.0, 2.0 ** 40])
    model = build_model(g.check(), 0, values=({}, {"x": x}))
    sess = ort.InferenceSession(model.onnx.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = sess.run(None, {"x": x})
    np.testing.assert_array_equal(got, [2.0, 3.0, 10.0, 40.0])
    np.testing.assert_array_equal(model.oracle.output["z"], got)
