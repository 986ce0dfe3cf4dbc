"""Relax lowerings of the reductions over one axis, Softmax/LogSoftmax and CumSum. ReduceL1/L2 and
LogSumExp are their formulas (LogSumExp shifted by the max, stable as torch's)."""
from tvm.relax import op as R

from nnfuzz.materialize.relax.lowering import RELAX_LOWERINGS, relax_lowers
from nnfuzz.ops.reduce import spec as Rd

_REDUCE = {
    Rd.ReduceSum: R.sum,
    Rd.ReduceProd: R.prod,
    Rd.ReduceMean: R.mean,
    Rd.ReduceMax: R.max,
    Rd.ReduceMin: R.min,
    Rd.ArgMax: R.argmax,
    Rd.ArgMin: R.argmin,
}
for _cls, _fn in _REDUCE.items():
    RELAX_LOWERINGS[_cls] = (lambda f: lambda op, g, x: f(x, op.axis, op.keepdims))(_fn)


@relax_lowers(Rd.ReduceL1)
def _l1(op, g, x):
    return R.sum(R.abs(x), op.axis, op.keepdims)


@relax_lowers(Rd.ReduceL2)
def _l2(op, g, x):
    """float16/bfloat16 in float32, as the ONNX lowering does (ops/reduce/onnx.py): their sum of squares
    overflows where the norm does not (a false alarm of a tvm-cpu soak, folder 0140)."""
    dt = g.dtype(x)
    wide = dt in ("float16", "bfloat16")
    v = R.astype(x, "float32") if wide else x
    out = R.sqrt(R.sum(R.multiply(v, v), op.axis, op.keepdims))
    return R.astype(out, dt) if wide else out


@relax_lowers(Rd.LogSumExp)
def _logsumexp(op, g, x):
    m = g.emit(R.max(x, op.axis, True))
    s = R.log(R.sum(R.exp(R.subtract(x, m)), op.axis, True))
    out = R.add(s, m)
    return out if op.keepdims else R.squeeze(out, [op.axis])


@relax_lowers(Rd.Softmax)
def _softmax(op, g, x):
    return R.nn.softmax(x, op.axis)


@relax_lowers(Rd.LogSoftmax)
def _log_softmax(op, g, x):
    return R.nn.log_softmax(x, op.axis)


@relax_lowers(Rd.CumSum)
def _cumsum(op, g, x):
    return R.cumsum(x, op.axis, g.dtype(x))
