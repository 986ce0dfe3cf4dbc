"""Every metamorphic rewrite (nnfuzz/materialize/onnx/rewrite/) keeps the model's meaning: over many
generated models, the rewritten model passes the full ONNX checker and ONNX Runtime computes the same
outputs from it as from the original (an extra output that copies one must equal it). A rewrite that
changed the meaning would make the metamorphic oracle raise false alarms."""
import functools

import numpy as np
import onnx
import pytest

from nnfuzz.errors import NNFuzzError
from nnfuzz.generate import generate_graph
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.onnx.rewrite.drawing import load_all, rewrite_model
from nnfuzz.materialize.onnx.rewrite.graphs import NotApplicable
from nnfuzz.materialize.onnx.rewrite.registry import RewriteContext
from nnfuzz.materialize.onnx.spec import ExportSpec

ort = pytest.importorskip("onnxruntime")
SEEDS = range(30)
POLICY = GenPolicy(max_nodes=7, dtypes=["float32", "int32", "int64", "bool"])


@functools.lru_cache(maxsize=None)
def _model(seed):
    """(model, its outputs on ORT) or None when the seed makes no model ORT runs to finite outputs."""
    try:
        gir = generate_graph(POLICY, seed=seed)
        m = build_model(gir, seed, export=ExportSpec(opset=None).for_model(seed))
        outs = _run(m.onnx, m.oracle.input)
    except (NNFuzzError, ort.capi.onnxruntime_pybind11_state.Fail, ort.capi.onnxruntime_pybind11_state.NotImplemented,
            ort.capi.onnxruntime_pybind11_state.InvalidArgument, ort.capi.onnxruntime_pybind11_state.RuntimeException):
        return None  # a graph ORT lacks a kernel for, or values it rejects (an integer division by zero)
    return m, outs


def _run(model, inputs):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    wanted = {i.name for i in sess.get_inputs()}
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, {k: v for k, v in inputs.items() if k in wanted})))


@pytest.mark.parametrize("kind", sorted(load_all()))
def test_rewrite_keeps_the_outputs(kind):
    applied = 0
    for seed in SEEDS:
        made = _model(seed)
        if made is None:
            continue
        m, want = made
        ctx = RewriteContext(m.gir, m.weights, m.export, defined=m.oracle.output is not None)
        try:
            rw, record = rewrite_model(m.onnx, seed, ctx, [kind], steps=1)
        except NotApplicable:
            continue
        applied += 1
        onnx.checker.check_model(rw, full_check=True)
        assert [s["kind"] for s in record["steps"]] == [kind]
        got = _run(rw, m.oracle.input)
        for name, w in want.items():
            g = got[name]
            assert g.dtype == w.dtype and g.shape == w.shape, (seed, name)
            if w.dtype.kind == "f":
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True, err_msg=f"{kind} seed {seed}")
            else:
                np.testing.assert_array_equal(g, w, err_msg=f"{kind} seed {seed}")
        for copy, src in record["aliases"].items():
            np.testing.assert_array_equal(got[copy], got[src])
    assert applied >= 10, f"{kind} applied to only {applied} of {len(SEEDS)} models"


def test_rewrites_are_drawn_from_the_seed_and_stack():
    made = next(m for m in map(_model, SEEDS) if m is not None)
    m = made[0]
    a = rewrite_model(m.onnx, 5, RewriteContext(m.gir, m.weights, m.export), steps=2)
    b = rewrite_model(m.onnx, 5, RewriteContext(m.gir, m.weights, m.export), steps=2)
    assert a[0].SerializeToString() == b[0].SerializeToString() and a[1] == b[1]
    assert len(a[1]["steps"]) + len(a[1]["skipped"]) == 2


def test_a_nested_function_chain_calls_each_function_once():
    made = next(m for m in map(_model, SEEDS) if m is not None and len(m[0].onnx.graph.node) >= 3)
    m = made[0]
    rw, record = rewrite_model(m.onnx, 1, RewriteContext(), ["function-chain"], steps=1)
    depth = record["steps"][0]["depth"]
    assert len(rw.functions) == depth >= 2
    called = [n.op_type for f in rw.functions for n in f.node if n.domain == "nnfuzz.rewrite"]
    assert sorted(called) == sorted(f.name for f in rw.functions)[:-1] or len(called) == depth - 1
    assert any(o.domain == "nnfuzz.rewrite" for o in rw.opset_import) and rw.ir_version >= 8
