"""Element types shared by every part of nnfuzz, with conversions to each framework.

Framework modules are imported only inside the conversion that needs them.
"""
from __future__ import annotations

import enum

import numpy as np


class _IdentityHash:
    """Members are singletons compared by identity: hash them by identity too, in C (Enum's own hash hashes
    the name in Python, and dtypes key the generator's hottest lookups). Inherited, not set on DType itself:
    lowerings look dtypes up inside torch.compile, and dynamo (torch 2.11) refuses to hash an object whose
    own class sets __hash__ ("User-defined object with overridden __hash__")."""

    __hash__ = object.__hash__


class DType(_IdentityHash, enum.Enum):
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
    # quantized-tensor types: only the quant family's QuantizeLinear outputs and DequantizeLinear inputs
    # hold them (DTYPE_QUANT_ONLY), never a graph input, weight or output, nor any other op's tensor
    uint16 = "uint16"
    int4 = "int4"
    uint4 = "uint4"
    float8_e4m3fn = "float8_e4m3fn"
    float8_e5m2 = "float8_e5m2"

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
    def quant_only(self) -> bool:
        """A quantized-tensor type (DTYPE_QUANT_ONLY): held only between a QuantizeLinear and a DequantizeLinear."""
        return self in DTYPE_QUANT_ONLY

    @property
    def is_float8(self) -> bool:
        return self is DType.float8_e4m3fn or self is DType.float8_e5m2

    @property
    def itemsize(self) -> int:
        return _ITEMSIZE[self]

    def numpy(self):
        if self in _ML_DTYPES:
            import ml_dtypes  # shipped with onnx and tensorflow

            return np.dtype(getattr(ml_dtypes, self.value))
        return np.dtype(self.value)

    def torch(self):
        """The torch dtype of a tensor of this type; for a quantized-tensor type, the torch dtype that
        carries its values (``TORCH_CARRIER``: torch has no arithmetic on int4, uint16 or float8)."""
        import torch

        return getattr(torch, TORCH_CARRIER.get(self, self).value)

    def tensorflow(self):
        if self.quant_only:
            raise ValueError(f"{self.value} is a quantized-tensor type that only the quant family holds, and the "
                             "quant family has no TF lowering (nnfuzz/ops/quant/tf.py): no TF model holds it")
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
    DType.uint8: "u8", DType.bool: "b", DType.uint16: "u16", DType.int4: "i4", DType.uint4: "u4",
    DType.float8_e4m3fn: "f8e4m3", DType.float8_e5m2: "f8e5m2",
}
_ITEMSIZE = {
    DType.float16: 2, DType.bfloat16: 2, DType.float32: 4, DType.float64: 8,
    DType.int8: 1, DType.int16: 2, DType.int32: 4, DType.int64: 8, DType.uint8: 1, DType.bool: 1,
    DType.uint16: 2, DType.int4: 1, DType.uint4: 1, DType.float8_e4m3fn: 1, DType.float8_e5m2: 1,  # 4 bits held in 1
}
# onnx.TensorProto element types (stable numbers from onnx.proto)
_ONNX = {
    DType.float32: 1, DType.uint8: 2, DType.int8: 3, DType.int16: 5, DType.int32: 6,
    DType.int64: 7, DType.bool: 9, DType.float16: 10, DType.float64: 11, DType.bfloat16: 16,
    DType.uint16: 4, DType.float8_e4m3fn: 17, DType.float8_e5m2: 19, DType.uint4: 21, DType.int4: 22,
}
_ML_DTYPES = (DType.bfloat16, DType.int4, DType.uint4, DType.float8_e4m3fn, DType.float8_e5m2)

DTYPE_FLOATS = (DType.float16, DType.bfloat16, DType.float32, DType.float64)
DTYPE_INTS = (DType.int8, DType.int16, DType.int32, DType.int64, DType.uint8)
DTYPE_SIGNED_INTS = (DType.int8, DType.int16, DType.int32, DType.int64)
DTYPE_NUMERIC = DTYPE_FLOATS + DTYPE_INTS
DTYPE_ALL = DTYPE_NUMERIC + (DType.bool,)
DTYPE_QUANT_ONLY = (DType.uint16, DType.int4, DType.uint4, DType.float8_e4m3fn, DType.float8_e5m2)
# the torch dtype holding a quantized-tensor type's values: integers in a wider integer, float8 values
# (exactly) in float32; the quant family's torch lowering rounds and saturates to the narrow type's grid
TORCH_CARRIER = {DType.uint16: DType.int32, DType.int4: DType.int8, DType.uint4: DType.uint8,
                 DType.float8_e4m3fn: DType.float32, DType.float8_e5m2: DType.float32}
