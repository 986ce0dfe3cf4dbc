"""A float16 transposed convolution with a padded dilated dim is not generated: its input gradient is torch's
CPU float16 dilated convolution, which segfaults there (ort-cpu soak: producers died in the value search's
backward; the search record of one replayed the crash, reduced to the case below). Conv excludes the same."""
import pytest

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.ops.conv import spec as C

SOAK = C.ConvTranspose2d(1, 2, 1, 1, 0, 0, 1, 31, 1)  # the replayed graph's node


def _holds(op, dtype) -> bool:
    preds = op.requires([AbsTensor([12, 10, 2, 2], dtype), AbsTensor([10, 13, 3, 1], dtype)])
    return all(bool(p) for p in preds)


@pytest.mark.parametrize("dtype", [DType.float32, DType.float64])
def test_other_types_keep_the_padded_dilated_dim(dtype):
    assert _holds(SOAK, dtype)


def test_float16_leaves_out_only_a_padded_dilated_dim():
    assert not _holds(SOAK, DType.float16)
    assert _holds(C.ConvTranspose2d(1, 2, 1, 0, 0, 0, 1, 31, 1), DType.float16)  # the dilated dim unpadded
    assert _holds(C.ConvTranspose2d(1, 2, 1, 1, 0, 0, 1, 1, 1), DType.float16)   # padded, not dilated
