"""Pools whose padding would multiply the input (legal: padding up to half a kernel of thousands) are
computed by gathering windows, never by padding: the same values as torch, in bounded memory and time.
Found by the tf-cpu throughput run: MaxPool3d(kernel 161x768x1480, padding 77x381x737) on a
[2, 7, 7, 6, 6] float64 input padded to 2.6e9 elements and timed out (a false timeout bug). The pools run
in a contained worker (tests/contained.py): a native crash of TF fails one test, not the run."""
import time

import numpy as np
import pytest
from contained import contained  # noqa: F401 - the fixture

tf = pytest.importorskip("tensorflow")

from nnfuzz.abstract import AbsTensor, DType  # noqa: E402
from nnfuzz.ops.pool import spec as P  # noqa: E402
from nnfuzz.materialize.tensorflow.lowering import tf_lowering_for  # noqa: E402
from nnfuzz.ops.pool.tf import _oversized  # noqa: E402
from nnfuzz.materialize.torch.lowering import run_op  # noqa: E402
from nnfuzz.materialize.values import to_torch  # noqa: E402

CASES = [
    (P.MaxPool3d(161, 768, 1480, 3, 4, 13, 77, 381, 737, 1, 1, 1), [2, 7, 7, 6, 6], DType.float64),
    (P.MaxPool2d(3, 4001, 1, 3, 0, 2000, 2, 1), [1, 3, 401, 6], DType.float32),  # dilated rows
    (P.MaxPool1d(4_000_001, 7, 2_000_000, 1), [2, 3, 9], DType.float32),
    (P.AvgPool2d(1200, 1400, 5, 3, 600, 700, count_include_pad=True), [2, 2, 4, 7], DType.float32),
    (P.AvgPool2d(1200, 1400, 5, 3, 600, 700, count_include_pad=False), [2, 2, 4, 7], DType.float32),
    (P.AvgPool1d(4_000_001, 2, 2_000_000, count_include_pad=False), [1, 2, 11], DType.float16),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", range(len(CASES)), ids=[repr(c[0])[:40] for c in CASES])
def test_oversized_pool_matches_torch(contained, case):
    contained(pool_matches_torch, case)


def pool_matches_torch(case):
    op, shape, dtype = CASES[case]
    t = AbsTensor(shape, dtype)
    (out,) = op.checked_type_transfer([t])
    assert all(p is True for p in op.checked_requires([t])), f"{op!r} is not a valid instance on {t}"
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 4).astype(dtype.numpy())
    (want,) = run_op(op, to_torch(x, dtype))
    tx = tf.constant(x)
    assert _oversized(op, tx)
    t0 = time.perf_counter()
    got = tf_lowering_for(type(op))(op, tx).numpy()
    assert time.perf_counter() - t0 < 5.0  # padding first took minutes and gigabytes
    assert list(got.shape) == [int(d) for d in out.shape]
    tol = 1e-2 if dtype is DType.float16 else 1e-5  # the half mean is summed in float32, rounded once
    np.testing.assert_allclose(got.astype(np.float64), want.float().numpy().astype(np.float64), rtol=tol, atol=tol)
