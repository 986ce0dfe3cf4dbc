"""Matrix products: MatMul (numpy/torch ``matmul`` rules), Linear (``x @ W.T + b``) and Gemm
(``alpha * op(A) @ op(B) + beta * C`` on 2-D operands, ``op`` an optional transpose).

MatMul rules (as ``torch.matmul`` / ONNX MatMul):
  * 1-D @ 1-D: a dot product, rank-0 result; the lengths agree.
  * 1-D operands are promoted to a matrix by adding a unit dim (before for the left operand, after
    for the right one) and that dim is removed from the result.
  * otherwise the last two dims multiply as matrices, ``A[..., M, K] @ B[..., K, N] -> [..., M, N]``,
    and the leading (batch) dims broadcast numpy-style.
"""
from nnfuzz.abstract.accuracy import Accuracy
from nnfuzz.abstract import arith
from nnfuzz.abstract.dtype import DType, DTYPE_FLOATS
from nnfuzz.abstract.op import AbsOpBase, ranks
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError

MATMUL_MAX_RANK = 4
# ONNX MatMul/Gemm take int32/int64 but no 8/16-bit integers; torch has no bool matmul
LINEAR_DTYPES = DTYPE_FLOATS + (DType.int32, DType.int64)


def broadcast_dims(a, b):
    """Right-aligned numpy broadcast of two dim lists: (predicates, result dims)."""
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + list(a)
    b = [1] * (n - len(b)) + list(b)
    preds = [arith.Or(x == 1, y == 1, x == y) for x, y in zip(a, b)]
    return preds, [arith.If(x == 1, y, x) for x, y in zip(a, b)]


def _matmul_rule(a, b):
    """(predicates, output dims) of ``matmul`` for operand dim lists ``a`` and ``b``."""
    if len(a) == 1 and len(b) == 1:
        return [a[0] == b[0]], []
    if len(a) == 1:
        return [a[0] == b[-2]], list(b[:-2]) + [b[-1]]
    if len(b) == 1:
        return [a[-1] == b[0]], list(a[:-1])
    preds, batch = broadcast_dims(a[:-2], b[:-2])
    return [a[-1] == b[-2]] + preds, batch + [a[-2], b[-1]]


class MatMul(AbsOpBase):
    qdq, qdq_weight = "compute", (1, -1)
    accuracy = Accuracy(4, 1.0, "inner")
    family = "linear"
    in_dtypes = [(d, d) for d in LINEAR_DTYPES]
    out_dtypes = [(d,) for d in LINEAR_DTYPES]
    inp_ranks = [ranks(1, MATMUL_MAX_RANK), ranks(1, MATMUL_MAX_RANK)]
    out_ranks = [ranks(0, MATMUL_MAX_RANK)]

    def requires(self, inputs):
        a, b = inputs
        return _matmul_rule(a.shape, b.shape)[0]

    def type_transfer(self, inputs):
        a, b = inputs
        return [AbsTensor(_matmul_rule(a.shape, b.shape)[1], self.out_dtypes_for(inputs)[0])]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        dt_a, dt_b = self._pick_in_row([o.dtype for o in outputs], rng)
        r = outputs[0].ndims
        if r > MATMUL_MAX_RANK:
            raise ConstraintError(f"MatMul cannot produce rank {r}")
        if r == 0:
            options = [(1, 1)]
        elif r == 1:
            options = [(1, 2), (2, 1)]
        else:  # one operand carries the full batch rank, the other any matrix rank up to it
            options = [(r, k) for k in range(2, r + 1)] + [(k, r) for k in range(2, r)]
            if r + 1 <= MATMUL_MAX_RANK:
                options += [(1, r + 1), (r + 1, 1)]
        ra, rb = options[rng.randrange(len(options))] if rng is not None else options[0]
        return [(ra, dt_a), (rb, dt_b)]


class Linear(AbsOpBase):
    """``y = x @ W.T + b``: x[..., K], W[N, K], b[N] -> y[..., N] (ONNX Gemm or MatMul + Add)."""
    qdq, qdq_weight = "compute", (1, 0)
    accuracy = Accuracy(4, 1.0, "inner")
    family = "linear"

    in_dtypes = [(d, d, d) for d in LINEAR_DTYPES]
    out_dtypes = [(d,) for d in LINEAR_DTYPES]
    inp_ranks = [ranks(1, 4), (2,), (1,)]
    out_ranks = [ranks(1, 4)]

    def requires(self, inputs):
        x, w, b = inputs
        return [x.shape[-1] == w.shape[1], b.shape[0] == w.shape[0]]

    def type_transfer(self, inputs):
        x, w, _ = inputs
        return [AbsTensor(list(x.shape[:-1]) + [w.shape[0]], self.out_dtypes_for(inputs)[0])]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        row = self._pick_in_row([o.dtype for o in outputs], rng)
        r = outputs[0].ndims
        if r not in self.out_ranks[0]:
            raise ConstraintError(f"Linear cannot produce rank {r}")
        return [(r, row[0]), (2, row[1]), (1, row[2])]


class Gemm(AbsOpBase):
    """``alpha * A' @ B' + beta * C`` with ``A' = A.T if trans_a`` (likewise B).

    A'[M, K] @ B'[K, N]; C (rank 0..2) broadcasts one-way to [M, N] (each dim 1 or equal).
    Integer rows need integral alpha and beta (torch truncates them, ONNX keeps them as floats).
    """
    qdq, qdq_weight = "compute", (1, None)
    accuracy = Accuracy(4, 1.0, "inner")
    family = "linear"

    in_dtypes = [(d, d, d) for d in LINEAR_DTYPES]
    out_dtypes = [(d,) for d in LINEAR_DTYPES]
    inp_ranks = [(2,), (2,), (0, 1, 2)]
    out_ranks = [(2,)]
    attr_choices = {
        "alpha": (1.0, 0.5, 2.0),
        "beta": (1.0, 0.5, -1.0, 2.0),  # no 0: torch then ignores C (even NaN), ONNX does not
        "trans_a": (False, True),
        "trans_b": (False, True),
    }

    def __init__(self, *, alpha, beta, trans_a, trans_b):
        self.alpha = alpha
        self.beta = beta
        self.trans_a = trans_a
        self.trans_b = trans_b

    def _mkn(self, a, b):
        m, k = (a.shape[1], a.shape[0]) if self.trans_a else (a.shape[0], a.shape[1])
        k2, n = (b.shape[1], b.shape[0]) if self.trans_b else (b.shape[0], b.shape[1])
        return m, k, k2, n

    def requires(self, inputs):
        a, b, c = inputs
        if c.dtype.is_int and not (float(self.alpha).is_integer() and float(self.beta).is_integer()):
            return [False]
        m, k, k2, n = self._mkn(a, b)
        cdims = [1] * (2 - c.ndims) + list(c.shape)
        return [k == k2, arith.Or(cdims[0] == 1, cdims[0] == m), arith.Or(cdims[1] == 1, cdims[1] == n)]

    def type_transfer(self, inputs):
        a, b, _ = inputs
        m, _, _, n = self._mkn(a, b)
        return [AbsTensor([m, n], self.out_dtypes_for(inputs)[0])]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        row = self._pick_in_row([o.dtype for o in outputs], rng)
        rc = rng.choice((0, 1, 2)) if rng is not None else 2
        return [(2, row[0]), (2, row[1]), (rc, row[2])]
