"""The symbolic world: dtypes, abstract tensors and operators. Imports z3 and numpy only."""
from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import OP_REGISTRY, AbsOpBase, BinaryOpBase, UnaryOpBase, load_builtin_ops
from nnfuzz.abstract.tensor import AbsTensor

__all__ = ["DType", "AbsTensor", "AbsOpBase", "UnaryOpBase", "BinaryOpBase", "OP_REGISTRY", "load_builtin_ops"]
