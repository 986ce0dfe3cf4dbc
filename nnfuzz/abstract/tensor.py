"""AbsTensor: a shape (ints or z3 terms) and a dtype."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List

from nnfuzz.abstract import arith
from nnfuzz.abstract.dtype import DType


@dataclass
class AbsTensor:
    shape: List[arith.SymInt] = field(default_factory=list)
    dtype: DType = DType.float32

    def __post_init__(self):
        self.shape = list(self.shape)
        if not isinstance(self.dtype, DType):
            self.dtype = DType.parse(self.dtype)

    @property
    def ndims(self) -> int:
        return len(self.shape)

    @property
    def rank(self) -> int:
        return len(self.shape)

    def is_concrete(self) -> bool:
        for d in self.shape:
            if type(d) is not int and arith.is_sym(d):  # (ints, the common case, skip the call)
                return False
        return True

    def nelement(self) -> arith.SymInt:
        return arith.prod(self.shape)

    def nbytes(self) -> int:
        return int(self.nelement()) * self.dtype.itemsize

    def dims_positive(self) -> list:
        """Constraints that every dimension is at least 1."""
        return [d >= 1 for d in self.shape]

    def same_shape_as(self, other: "AbsTensor") -> list:
        if self.ndims != other.ndims:
            return [False]
        return [a == b for a, b in zip(self.shape, other.shape)]

    def to_json(self) -> dict:
        if not self.is_concrete():
            raise ValueError(f"cannot serialise a symbolic tensor {self}")
        return {"shape": [int(d) for d in self.shape], "dtype": self.dtype.value}

    @staticmethod
    def from_json(data: dict) -> "AbsTensor":
        return AbsTensor([int(d) for d in data["shape"]], DType.parse(data["dtype"]))

    def __str__(self) -> str:
        return f"{self.dtype.short}{list(self.shape)}"
