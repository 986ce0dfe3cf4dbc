"""The numpy reference of pooling and convolution never builds a padded copy of the input or every window
at once (issue 30's ort-cpu soak: QDQ graphs with 3-D pools and convolutions, calibrated on the reference,
took producers to 6.6 GB for a moment). A window or padding far larger than the input costs no more than
the output, and the values stay torch's."""
import numpy as np
import torch

from nnfuzz.fuzz import producer_peak
from nnfuzz.ops.conv import spec as C
from nnfuzz.ops.pool import spec as P
from nnfuzz.reference.registry import eval_op

X = np.random.default_rng(0).standard_normal((1, 2, 3, 2, 2)).astype(np.float32)


def _peak_growth_mb(fn):
    producer_peak.reset()
    base = producer_peak.peak_mb()
    out = fn()
    return out, producer_peak.peak_mb() - base


def test_a_3d_pool_whose_window_dwarfs_the_input():
    """kernel and stride 121 per dim, padding 60: one window per channel, the whole input (1.8 million taps each)."""
    op = P.MaxPool3d(121, 121, 121, 121, 121, 121, 60, 60, 60, 1, 1, 1)
    got, grew = _peak_growth_mb(lambda: eval_op(op, X)[0])
    assert got.shape == (1, 2, 1, 1, 1) and grew < 100
    assert np.array_equal(got.reshape(2), X.reshape(2, -1).max(axis=1))
    avg = P.AvgPool3d(121, 121, 121, 121, 121, 121, 60, 60, 60, count_include_pad=False)
    np.testing.assert_allclose(eval_op(avg, X)[0].reshape(2), X.reshape(2, -1).mean(axis=1), rtol=1e-6)


def test_a_3d_convolution_with_padding_far_beyond_the_input():
    """padding 300 and stride 300 per dim: 3 outputs per dim; a padded copy would be 1.7 GB per channel."""
    op = C.Conv3d(300, 300, 300, 300, 300, 300, 1, 1, 1, 1)
    w = np.random.default_rng(1).standard_normal((3, 2, 2, 1, 2)).astype(np.float32)
    got, grew = _peak_growth_mb(lambda: eval_op(op, X, w)[0])
    want = torch.nn.functional.conv3d(torch.from_numpy(X).double(), torch.from_numpy(w).double(), stride=300,
                                      padding=300).numpy()
    assert got.shape == want.shape and grew < 100
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
