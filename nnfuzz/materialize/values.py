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


def in_domain(v: np.ndarray, dom, dtype: DType) -> np.ndarray:
    """``v`` (drawn values of ``dtype``) moved inside the Domain ``dom`` of the op that consumes them,
    keeping their spread: a bounded domain squeezes them in through a sigmoid, a one-sided one folds
    them to its side, ``nonzero`` pushes them off zero; open ends and nonzero keep a distance that
    grows with ``dom.margin``. Bools are left as they are."""
    if dtype is DType.bool:
        return v
    x = np.asarray(v, dtype=np.float64)
    lo, hi = dom.lo, dom.hi
    if dtype.is_float:
        off = 0.05 + 0.02 * dom.margin
        if np.isfinite(lo) and np.isfinite(hi):
            x = lo + (hi - lo) * (0.05 + 0.9 / (1.0 + np.exp(-x)))
        elif np.isfinite(lo):
            x = lo + off + np.abs(x)
        elif np.isfinite(hi):
            x = hi - off - np.abs(x)
        if dom.nonzero:
            x = np.where(x < 0, -1.0, 1.0) * (np.abs(x) + off)
    else:
        x = np.round(x)
        if np.isfinite(lo) and np.isfinite(hi):
            lo_i, hi_i = np.ceil(lo + dom.lo_open), np.floor(hi - dom.hi_open)
            x = lo_i + np.mod(np.abs(x), hi_i - lo_i + 1)
        elif np.isfinite(lo):
            x = np.ceil(lo + dom.lo_open) + np.abs(x)
        elif np.isfinite(hi):
            x = np.floor(hi - dom.hi_open) - np.abs(x)
        info = np.iinfo(dtype.numpy())
        x = np.clip(np.abs(x) if info.min == 0 else x, info.min, info.max)  # unsigned: folded, not clipped to 0
        if dom.nonzero:
            x = np.where(x == 0, 1.0, x)
    x = np.asarray(x)  # numpy arithmetic on a 0-d array gives a scalar: keep it an array
    return x.astype(np.float32).astype(dtype.numpy()) if dtype.is_float else x.astype(dtype.numpy())


def consumer_domain(insts, var: str):
    """The domain every consumer of ``var`` in ``insts`` asks of it (their intersection), or None."""
    from nnfuzz.abstract.domain import Domain

    doms = [type(i.op).domains[k] for i in insts for k, v in enumerate(i.inputs)
            if v == var and k in type(i.op).domains]
    if not doms:
        return None
    if len(doms) == 1:
        return doms[0]
    lo = max(d.lo for d in doms)
    hi = min(d.hi for d in doms)
    if lo >= hi:
        return None
    return Domain(lo=lo, hi=hi, lo_open=any(d.lo_open and d.lo == lo for d in doms),
                  hi_open=any(d.hi_open and d.hi == hi for d in doms), nonzero=any(d.nonzero for d in doms),
                  margin=max(d.margin for d in doms))


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
