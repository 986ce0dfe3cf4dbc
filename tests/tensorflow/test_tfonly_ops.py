"""The TF-only ops (nnfuzz/ops/tfonly/): offered to TF campaigns only, and converted by the real
TFLite backend into models that agree with the torch reference. The conversions and runs happen in a
contained worker (tests/contained.py): a native crash of TF fails one test, not the run."""
import functools

import numpy as np
import pytest
import torch
from contained import contained  # noqa: F401 - the fixture

pytest.importorskip("tensorflow")
pytest.importorskip("ai_edge_litert")

from nnfuzz.ops.tfonly.spec import DivNoNan  # noqa: E402
from nnfuzz.backends import get_backend  # noqa: E402
from nnfuzz.errors import ConstraintError  # noqa: E402
from nnfuzz.generate import GenPolicy, generate_graph  # noqa: E402
from nnfuzz.generate.opset import select_ops  # noqa: E402
from nnfuzz.materialize.model import build_model  # noqa: E402
from nnfuzz.materialize.portable import pack  # noqa: E402
from nnfuzz.materialize.search import SearchConfig  # noqa: E402
from nnfuzz.materialize.torch.lowering import run_op  # noqa: E402

OPS = ["SquaredDifference", "FloorMod", "DivNoNan"]


def test_offered_to_tf_campaigns_only():
    assert set(OPS) <= {c.name for c in select_ops(GenPolicy(), dialects=("tf",))}
    assert not set(OPS) & {c.name for c in select_ops(GenPolicy())}


@functools.cache
def _tflite():
    """The TFLite backend, made before this worker runs any TF op: the TF backends pin TF's thread pools,
    which TF refuses once its context is up. The contained worker is a fresh process, so that holds."""
    return get_backend("tflite-cpu")


@pytest.mark.slow
@pytest.mark.parametrize("name", OPS)
def test_tflite_agrees_with_torch(contained, name):
    contained(tflite_agrees_with_torch, name)


def tflite_agrees_with_torch(name):
    tflite = _tflite()
    compared = 0
    for seed in range(12):
        if compared >= 4:  # x op x, a weight (a constant to the converter) on either side, two inputs
            break
        try:
            gir = generate_graph(GenPolicy(seed=seed, max_nodes=1, include=[name], dtypes=["float32"]))
        except ConstraintError:
            continue
        assert gir.op_names() == [name]
        model = build_model(gir, seed, export=False, search=SearchConfig())
        if model.oracle.output is None:
            continue  # no safe values found: undefined, nothing to compare
        compiled = tflite.compile(pack(gir.dumps(), model.weights))
        got = tflite.run(compiled, model.oracle.input)
        # both sides run one float32 formula (TFLite's kernels compute in float32 as torch does), so
        # only last-bit rounding separates them (e.g. a division done as a multiply by the reciprocal)
        for out, want in model.oracle.output.items():
            np.testing.assert_allclose(got[out], want, rtol=1e-4, atol=1e-5, err_msg=f"{name}, seed {seed}, {out}")
        compared += 1
    assert compared, f"no single-op graph of {name} could be built and compared"


@pytest.mark.slow
def test_tflite_div_no_nan_is_zero_where_y_is_zero(contained):
    contained(tflite_div_no_nan_is_zero_where_y_is_zero)


def tflite_div_no_nan_is_zero_where_y_is_zero():
    tflite = _tflite()
    for seed in range(20):  # a graph whose x and y are two distinct inputs, y of several elements
        gir = generate_graph(GenPolicy(seed=seed, max_nodes=1, include=["DivNoNan"], dtypes=["float32"]))
        (inst,) = gir.insts
        x, y = inst.inputs
        if x != y and {x, y} <= set(gir.inputs) and np.prod(gir.vars[y].shape) >= 2:
            break
    else:
        pytest.fail("no DivNoNan graph over two inputs in 20 seeds")
    model = build_model(gir, seed, export=False, search=SearchConfig())
    feed = dict(model.oracle.input)
    feed[y] = feed[y].copy()
    feed[y].reshape(-1)[::2] = 0.0
    got = tflite.run(tflite.compile(pack(gir.dumps(), model.weights)), feed)[gir.outputs[0]]
    want = run_op(DivNoNan(), torch.from_numpy(feed[x]), torch.from_numpy(feed[y]))[0].numpy()
    zero = np.broadcast_to(feed[y] == 0, got.shape)
    assert np.isfinite(got).all() and (got[zero] == 0).all() and (got[~zero] != 0).any()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
