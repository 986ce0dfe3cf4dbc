"""Einsum over a few equation shapes (ONNX Einsum, torch.einsum, numpy.einsum agree on them): each
input term names its dims by letters, one letter is one size wherever it appears, letters missing
from the output are summed over. No letter repeats within a term (no traces, no diagonals).
"""
from typing import Dict, List, Tuple

from nnfuzz.abstract.accuracy import Accuracy
from nnfuzz.abstract.dtype import DTYPE_FLOATS, DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError

EQUATIONS = (
    "ij,jk->ik",     # matmul
    "bij,bjk->bik",  # batch matmul
    "ij->ji",        # transpose
    "ij->i",         # a sum over the last axis
    "i,j->ij",       # outer product
    "ij,ij->ij",     # elementwise product
)
# ONNX Runtime's Einsum takes float, double, int32, int64; torch has no bool/8-bit integer einsum on CPU
EINSUM_DTYPES = DTYPE_FLOATS + (DType.int32, DType.int64)


def parse(equation: str) -> Tuple[List[str], str]:
    """(input terms, output term) of an explicit equation."""
    ins, out = equation.split("->")
    return ins.split(","), out


class Einsum(AbsOpBase):
    """out[output letters] = sum over the other letters of the product of the inputs' entries."""
    accuracy = Accuracy(4, 1.0, "largest")
    family = "einsum"
    in_dtypes = [(d, d) for d in EINSUM_DTYPES]
    out_dtypes = [(d,) for d in EINSUM_DTYPES]
    inp_ranks = [(2,), (2,)]
    out_ranks = [(2,)]
    attr_choices = {"equation": EQUATIONS}

    def __init__(self, *, equation):
        self.equation = equation
        self.terms, self.out_term = parse(equation)
        self.inp_ranks = [(len(t),) for t in self.terms]
        self.out_ranks = [(len(self.out_term),)]
        self.in_dtypes = [(d,) * len(self.terms) for d in EINSUM_DTYPES]
        self.out_dtypes = [(d,) for d in EINSUM_DTYPES]

    def _sizes(self, inputs) -> Dict[str, object]:
        sizes: Dict[str, object] = {}
        for term, x in zip(self.terms, inputs):
            for letter, d in zip(term, x.shape):
                sizes.setdefault(letter, d)
        return sizes

    def requires(self, inputs):
        sizes = self._sizes(inputs)
        return [d == sizes[letter] for term, x in zip(self.terms, inputs) for letter, d in zip(term, x.shape)]

    def type_transfer(self, inputs):
        sizes = self._sizes(inputs)
        return [AbsTensor([sizes[letter] for letter in self.out_term], self.out_dtypes_for(inputs)[0])]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        (out,) = outputs
        if out.ndims != len(self.out_term):
            raise ConstraintError(f"Einsum({self.equation}) cannot make a rank-{out.ndims} output")
        row = self._pick_in_row([out.dtype], rng)
        return [(len(t), dt) for t, dt in zip(self.terms, row)]
