"""Element types shared by every part of nnfuzz, with conversions to each framework.

Framework modules are imported only inside the conversion that needs them.
"""
from __future__ import annotations

import enum

import numpy as np


class DType(enum.Enum):
    float16 = "float16"
    bfloat16 = "bfloat16"
    float32 = "float32"
    float64 = "float64"
    int8 = "int8"
    int16 = "int16"
    int32 = "int32"
    int64 = "int64"
    uint8 = "uint8"
    bool = "bool"

    # Members are singletons compared by identity: hash them by identity too, in C (Enum's own hash
    # hashes the name in Python, and dtypes key the generator's hottest lookups)
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"DType.{self.value}"

    def __str__(self) -> str:
        return self.value

    @property
    def short(self) -> str:
        return _SHORT[self]

    @property
    def is_float(self) -> bool:
        return self in DTYPE_FLOATS

    @property
    def is_int(self) -> bool:
        return self in DTYPE_INTS

    @property
    def itemsize(self) -> int:
        return _ITEMSIZE[self]

    def numpy(self):
        if self is DType.bfloat16:
            import ml_dtypes  # shipped with onnx and tensorflow

            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(self.value)

    def torch(self):
        import torch

        return getattr(torch, self.value)

    def tensorflow(self):
        import tensorflow as tf

        return getattr(tf, self.value)

    def onnx(self) -> int:
        """The ONNX ``TensorProto.DataType`` number."""
        return _ONNX[self]

    @staticmethod
    def parse(value) -> "DType":
        """Accept a DType, its name, a numpy/torch/tf dtype or an ONNX element type number."""
        if isinstance(value, DType):
            return value
        if isinstance(value, int):
            for dt, num in _ONNX.items():
                if num == value:
                    return dt
            raise ValueError(f"unknown ONNX element type {value}; known: {sorted(_ONNX.values())}")
        name = str(value).replace("torch.", "").replace("<dtype: '", "").replace("'>", "")
        name = {"float": "float32", "double": "float64", "half": "float16", "bool_": "bool"}.get(name, name)
        try:
            return DType(name)
        except ValueError:
            raise ValueError(
                f"unknown dtype {value!r}; valid names: {[d.value for d in DType]}"
            ) from None


_SHORT = {
    DType.float16: "f16", DType.bfloat16: "bf16", DType.float32: "f32", DType.float64: "f64",
    DType.int8: "i8", DType.int16: "i16", DType.int32: "i32", DType.int64: "i64",
    DType.uint8: "u8", DType.bool: "b",
}
_ITEMSIZE = {
    DType.float16: 2, DType.bfloat16: 2, DType.float32: 4, DType.float64: 8,
    DType.int8: 1, DType.int16: 2, DType.int32: 4, DType.int64: 8, DType.uint8: 1, DType.bool: 1,
}
# onnx.TensorProto element types (stable numbers from onnx.proto)
_ONNX = {
    DType.float32: 1, DType.uint8: 2, DType.int8: 3, DType.int16: 5, DType.int32: 6,
    DType.int64: 7, DType.bool: 9, DType.float16: 10, DType.float64: 11, DType.bfloat16: 16,
}

DTYPE_FLOATS = (DType.float16, DType.bfloat16, DType.float32, DType.float64)
DTYPE_INTS = (DType.int8, DType.int16, DType.int32, DType.int64, DType.uint8)
DTYPE_SIGNED_INTS = (DType.int8, DType.int16, DType.int32, DType.int64)
DTYPE_NUMERIC = DTYPE_FLOATS + DTYPE_INTS
DTYPE_ALL = DTYPE_NUMERIC + (DType.bool,)
