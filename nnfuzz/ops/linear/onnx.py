"""ONNX lowerings of the matrix products.

The Gemm forms are drawn for float operands only: ONNX allows integer Gemm, but ONNX Runtime has no
integer Gemm kernel, so an integer MatMul or Linear would turn "unsupported" by its spelling alone.

MatMul: ONNX MatMul has numpy's (and torch.matmul's) rules; two float matrices may also be written
        as a Gemm without C (drawn).
Linear: ``x @ W.T + b``: MatMul(x, Transpose(W)) + b, or for a matrix x a Gemm (W transposed by
        ``transB=1`` or by a Transpose node), or for x of rank 3-4 a Reshape to a matrix, a Gemm and
        a Reshape back (drawn).
Gemm:   one Gemm (defaults given or omitted, a transposed operand by ``trans*=1`` or by a Transpose
        node), or MatMul, Mul and Add (drawn). Integer rows always take the MatMul form: Gemm scales
        by float ``alpha``/``beta`` (the reference computes integer Gemm through float64), while
        torch and the numpy reference apply integral alpha and beta as integers.
"""
import numpy as np

from nnfuzz.abstract.dtype import DTYPE_FLOATS
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.linear import spec as L


def _transposed(g, m, by_attr_key: str):
    """(operand, trans attribute) for ``m.T`` in a Gemm: the attribute, or a Transpose node (drawn)."""
    if g.flip(by_attr_key, "Transpose", "attribute"):
        shape = g.shape(m)[::-1] if g.shape(m) is not None else None
        perm = {} if g.flip("perm", "omitted", "given") else {"perm": [1, 0]}
        return g.op("Transpose", m, shape=shape, **perm), 0
    return m, 1


def _gemm(g, a, b, c=None, *, trans_a=False, trans_b=False, alpha=1.0, beta=1.0):
    """A Gemm node; each attribute at its default given or omitted (drawn)."""
    ta, tb = 0, 0
    if trans_a:
        a, ta = _transposed(g, a, "trans_a")
    if trans_b:
        b, tb = _transposed(g, b, "trans_b")
    attrs = {}
    for key, value, default in (("transA", ta, 0), ("transB", tb, 0), ("alpha", float(alpha), 1.0),
                                ("beta", float(beta), 1.0)):
        if value != default or g.flip(key, "given", "omitted"):
            attrs[key] = value
    return g.op("Gemm", a, b, c, **attrs)


@onnx_lowers(L.MatMul)
def _matmul(op, g, a, b):
    if g.rank(a) == 2 and g.rank(b) == 2 and g.dtype(a) in DTYPE_FLOATS and g.flip("form", "Gemm", "MatMul"):
        return _gemm(g, a, b)
    return g.op("MatMul", a, b)


@onnx_lowers(L.Linear)
def _linear(op, g, x, w, b):
    gemm = g.dtype(x) in DTYPE_FLOATS
    forms = ["MatMul+Add"] + ([("Gemm" if g.rank(x) == 2 else "Reshape+Gemm")] if gemm and g.rank(x) > 1 else [])
    form = g.draw("form", forms)
    if form == "Gemm":
        return _gemm(g, x, w, b, trans_b=True)
    if form == "Reshape+Gemm":
        k, n = g.shape(w)[1], g.shape(w)[0]
        lead = list(g.shape(x)[:-1])
        rows = int(np.prod(lead))
        flat = g.op("Reshape", x, g.shape_operand([rows, k], x, w), shape=(rows, k))
        y = _gemm(g, flat, w, b, trans_b=True)
        return g.op("Reshape", y, g.shape_operand(lead + [n], x, w))
    wt = g.op("Transpose", w, perm=[1, 0], shape=g.shape(w)[::-1])
    return g.op("Add", g.op("MatMul", x, wt), b)


@onnx_lowers(L.Gemm)
def _gemm_op(op, g, a, b, c):
    if g.dtype(a) in DTYPE_FLOATS and not g.flip("form", "MatMul+Mul+Add", "Gemm"):
        return _gemm(g, a, b, c, trans_a=op.trans_a, trans_b=op.trans_b, alpha=op.alpha, beta=op.beta)
    a = g.op("Transpose", a, perm=[1, 0]) if op.trans_a else a
    b = g.op("Transpose", b, perm=[1, 0]) if op.trans_b else b
    ab = g.op("MatMul", a, b)
    alpha, beta = (op.alpha, op.beta) if g.dtype(a) in DTYPE_FLOATS else (int(op.alpha), int(op.beta))
    if alpha != 1:
        ab = g.op("Mul", ab, g.like(alpha, ab))
    if beta != 1:
        c = g.op("Mul", c, g.like(beta, c))
    return g.op("Add", ab, c)
