"""Matrix products. Floats in float64 (rounded once by eval_op); integers in their own dtype, so
products and sums wrap like C.

MatMul: numpy ``matmul`` (the abstract op's rules are numpy's: 1-D operands promoted and the unit
        dim removed again, batch dims broadcast).
Linear: ``x @ W.T + b``.
Gemm:   ``alpha * A' @ B' + beta * C`` with ``A' = A.T if trans_a`` (likewise B), C broadcast to
        [M, N]. Integer rows have integral alpha and beta, applied as integers.
"""
import numpy as np

from nnfuzz.ops.linear import spec as L
from nnfuzz.reference.registry import evaluates


def num(x):
    """Integers as they are, floats (bfloat16 included) in float64."""
    return x if x.dtype.kind in "iu" else np.asarray(x, dtype=np.float64)


@evaluates(L.MatMul)
def _matmul(op, a, b):
    return np.matmul(num(a), num(b))


@evaluates(L.Linear)
def _linear(op, x, w, b):
    return np.matmul(num(x), num(w).T) + num(b)


@evaluates(L.Gemm)
def _gemm(op, a, b, c):
    a, b, c = num(a), num(b), num(c)
    a = a.T if op.trans_a else a
    b = b.T if op.trans_b else b
    alpha, beta = (int(op.alpha), int(op.beta)) if c.dtype.kind in "iu" else (op.alpha, op.beta)
    return alpha * np.matmul(a, b) + beta * c
