"""The search's trainable leaves (one per graph input or weight) and the fresh values it restarts from."""
from __future__ import annotations

import numpy as np

from nnfuzz.abstract.dtype import DType


class Leaf:
    """A trainable float64 master tensor behind one graph input or weight."""

    def __init__(self, name: str, dtype: DType, value: np.ndarray, grad: bool):
        import torch

        self.name, self.dtype = name, dtype
        if dtype.is_float:
            self.lo, self.hi = None, None
        elif dtype is DType.bool:
            self.lo, self.hi = 0.0, 1.0
        else:
            info = np.iinfo(dtype.numpy())
            self.lo, self.hi = float(info.min), float(info.max)
        self.master = torch.zeros(value.shape, dtype=torch.float64, requires_grad=grad)
        self.set(value)

    def set(self, value: np.ndarray) -> None:
        import torch

        v = np.asarray(value).astype(np.float64)
        if self.dtype is DType.bool:
            v = np.where(v > 0.5, 1.0, -1.0)  # the master's sign is the bool
        with torch.no_grad():
            self.master.copy_(torch.from_numpy(np.array(v, dtype=np.float64, order="C")))

    def values(self):
        """(hard value in the leaf's dtype, float64 surrogate or None)."""
        import torch

        m, dt = self.master, self.dtype
        if dt.is_float:
            return m.to(dt.torch()), None
        if dt is DType.bool:
            hard = m.detach() > 0
            sig = torch.sigmoid(m)
            return hard, hard.double() + (sig - sig.detach())
        r = torch.round(m.detach()).clamp(self.lo, self.hi)
        return r.to(dt.torch()), m + (r - m).detach()

    def numpy(self) -> np.ndarray:
        from nnfuzz.materialize.values import to_numpy

        return to_numpy(self.values()[0])

    def redraw_nonfinite(self, rng) -> None:
        import torch

        with torch.no_grad():
            bad = ~torch.isfinite(self.master)
            if bad.any():
                self.master[bad] = torch.from_numpy(rng.standard_normal(int(bad.sum())))


def fresh(leaf: Leaf, rng: np.random.Generator, restart: int) -> np.ndarray:
    """Values for ``leaf`` at a restart (``fresh_values``)."""
    return fresh_values(tuple(leaf.master.shape), leaf.dtype, rng, restart)


def fresh_values(shape: tuple, dtype: DType, rng: np.random.Generator, restart: int) -> np.ndarray:
    """Values for a restart: float scales alternate; integers shrink towards small non-zero values."""
    if dtype.is_float:
        v = rng.standard_normal(shape) * (1.0, 0.5, 2.0, 0.25, 1.0, 0.5)[restart % 6]
        # every other draw one-signed, mostly positive: most domains (log, sqrt, pow's base) lie on
        # that side, a reciprocal's sign cannot be changed by small steps, and a zero pushed away from
        # 0 through a floor or a min may only be able to go negative
        if restart % 2:
            return (np.abs(v) + 0.05) * (-1.0 if restart % 6 == 5 else 1.0)
        return v
    if dtype is DType.bool:
        return rng.random(shape) < 0.5
    mag = max(1, 8 >> (restart // 2))
    v = rng.integers(1, mag + 1, size=shape)
    if dtype is DType.uint8:
        return v
    return v * rng.choice([-1, 1], size=shape)
