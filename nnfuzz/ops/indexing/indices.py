"""The constant index tensors of the indexing ops: a function of the op's attributes (``pick`` chooses
one of several patterns) and the concrete shapes, in range and, where an op needs it, without
duplicates BY CONSTRUCTION. The numpy eval and every lowering call these, so all read the same indices,
and no input value can put an index out of range. Numpy only.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np


def _scramble(n: int, pick: int) -> np.ndarray:
    """n deterministic, well-spread non-negative ints (a multiplicative hash of 0..n-1 and ``pick``)."""
    k = np.arange(n, dtype=np.uint64)
    h = (k * np.uint64(2654435761) + np.uint64(40503 * pick + 17)) % np.uint64(1 << 32)
    return (h >> np.uint64(8)).astype(np.int64)


def gather_indices(shape: Sequence[int], bound: int, pick: int) -> np.ndarray:
    """An int64 tensor of ``shape`` with entries in [0, bound), repeats allowed."""
    n = int(np.prod(shape, dtype=np.int64))
    return (_scramble(n, pick) % bound).reshape(tuple(shape))


def distinct_indices(shape: Sequence[int], axis: int, bound: int, pick: int) -> np.ndarray:
    """An int64 tensor of ``shape`` with entries in [0, bound), distinct along ``axis`` (needs
    ``shape[axis] <= bound``): each line along the axis is a rotation of 0..bound-1, forward or
    backward (``pick``'s parity), cut to its length."""
    if shape[axis] > bound:
        raise ValueError(f"{shape[axis]} distinct indices along axis {axis} cannot lie in [0, {bound})")
    offset = np.take(gather_indices(shape, bound, pick), [0], axis=axis)
    along = np.indices(tuple(shape), dtype=np.int64)[axis]
    sign = 1 if pick % 2 == 0 else -1
    return (offset + sign * along) % bound


def scatter_element_indices(op, data_shape, upd_shape) -> np.ndarray:
    """ScatterElements' indices (of ``upd_shape``, into dim ``op.axis`` of data): distinct along the
    axis without a reduction (repeated targets are undefined there), repeats with one."""
    shape, bound = [int(d) for d in upd_shape], int(data_shape[op.axis])
    if op.reduction == "none":
        return distinct_indices(shape, op.axis, bound, op.pick)
    return gather_indices(shape, bound, op.pick)


def nd_positions(lead: Sequence[int], n: int, pick: int) -> np.ndarray:
    """``n`` distinct index tuples into a tensor whose leading dims are ``lead``, as int64 ``[n, len(lead)]``:
    an arithmetic walk through the flattened positions with a step coprime to their count."""
    count = int(np.prod(lead, dtype=np.int64))
    if n > count:
        raise ValueError(f"{n} distinct positions do not fit in dims {list(lead)}")
    step = next(s for s in range(max(1, (count * 5) // 8), count + 2) if math.gcd(s, count) == 1)
    start = int(_scramble(1, pick)[0]) % count
    flat = (start + step * np.arange(n, dtype=np.int64)) % count
    return np.stack(np.unravel_index(flat, tuple(lead)), axis=-1).astype(np.int64).reshape(n, len(lead))


def sequence_lens(batch: int, time: int, pick: int) -> np.ndarray:
    """ReverseSequence's lengths: int64 ``[batch]`` in [1, time], the first one ``time`` (a whole reversal)."""
    lens = 1 + _scramble(batch, pick) % time
    lens[0] = time
    return lens


def full_coords(idx: np.ndarray, axis: int) -> np.ndarray:
    """Index tuples ``[*idx.shape, rank]`` that address, for each entry of ``idx`` (indices along
    ``axis``), the element at its own position with the axis coordinate replaced by the entry."""
    grid = np.indices(idx.shape, dtype=np.int64)
    grid[axis] = idx
    return np.moveaxis(grid, 0, -1)
