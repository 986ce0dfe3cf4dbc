"""Random input values for a model (plain sampling; the gradient search refines these later)."""
from __future__ import annotations

import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.tensor import AbsTensor


def random_array(t: AbsTensor, rng: np.random.Generator) -> np.ndarray:
    """Values of ``t``'s shape and dtype: floats ~ N(0, 1), ints in a small range, bools fair."""
    shape = [int(d) for d in t.shape]
    dt = t.dtype
    if dt is DType.bool:
        return np.asarray(rng.random(shape) < 0.5)
    if dt is DType.uint8:
        return rng.integers(0, 16, size=shape).astype(np.uint8)
    if dt.is_int:
        return rng.integers(-8, 9, size=shape).astype(dt.numpy())
    return rng.standard_normal(shape).astype(np.float32).astype(dt.numpy())


def to_torch(a: np.ndarray, dtype: DType):
    import torch

    if dtype is DType.bfloat16:
        return torch.from_numpy(np.array(a, dtype=np.float32, order="C")).to(torch.bfloat16)
    return torch.from_numpy(np.array(a, order="C", copy=True))


def to_numpy(x) -> np.ndarray:
    import torch

    x = x.detach()
    if x.dtype == torch.bfloat16:
        import ml_dtypes

        return x.float().numpy().astype(ml_dtypes.bfloat16)
    return x.numpy()


def all_finite(arrays) -> bool:
    """No NaN/Inf in any of ``arrays`` (a dict of name -> array, any dtype; bfloat16 included)."""
    return all(np.isfinite(np.asarray(a).astype(np.float64)).all() for a in arrays.values())
