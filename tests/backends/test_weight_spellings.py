"""Every ONNX system runs a model whatever the spelling of its weights (an initializer, a Constant node, or
a graph input with an initializer, which the system must treat as a parameter, not ask the caller for).
The systems run in a contained worker (tests/contained.py): a native crash fails one test, not the run."""
import importlib.util

import numpy as np
import pytest
from contained import contained  # noqa: F401 - the fixture

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.backends.registry import backend_class
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.onnx.direct import WEIGHT_SPELLINGS
from nnfuzz.materialize.onnx.spec import ExportSpec
from nnfuzz.ops.elementwise import spec as E

NEEDS = {"ort-cpu": "onnxruntime", "tvm-cpu": "tvm", "openvino-cpu": "openvino"}


def _models():
    """One model per weight spelling: x -> Relu, and a weight w -> LeakyRelu, both outputs."""
    g = GraphIR()
    for v in ("x", "w", "a", "b"):
        g.vars[v] = AbsTensor([2, 3], DType.float32)
    g.inputs, g.weights, g.outputs = ["x"], ["w"], ["a", "b"]
    g.insts = [Inst(E.Relu(), ["x"], ["a"]), Inst(E.LeakyRelu(negative_slope=0.5), ["w"], ["b"])]
    g.check()
    found = {}
    for seed in range(64):
        m = build_model(g, seed, export=ExportSpec(opset=17, seed=seed))
        found.setdefault(m.spellings["w"]["weight"], m)
    assert set(found) == set(WEIGHT_SPELLINGS), f"64 seeds drew only {sorted(found)}"
    return found


@pytest.mark.parametrize("backend", sorted(NEEDS))
@pytest.mark.slow
def test_every_weight_spelling_runs(contained, backend):
    if importlib.util.find_spec(NEEDS[backend]) is None:
        pytest.skip(f"{NEEDS[backend]} is not installed")
    contained(every_weight_spelling_runs, backend)


def every_weight_spelling_runs(backend):
    b = backend_class(backend)()
    for spelling, m in _models().items():
        got = b.run(b.compile(m.onnx.SerializeToString()), m.oracle.input)
        for name, want in m.oracle.output.items():
            np.testing.assert_allclose(got[name], want, rtol=1e-6, err_msg=f"{backend}, weight as {spelling}")
