"""ONNX lowerings of ReduceSumSquare, GlobalLpPool, LpNormalization and MeanVarianceNormalization. Each is
its ONNX node, or (drawn) an equivalent composition: ReduceSum(x * x); LpPool with the spatial dims as
kernel, or ReduceL1/ReduceL2 over them; x / ReduceL1/ReduceL2(x); MVN as its ONNX function body.
Attributes equal to their defaults are written or omitted (drawn), axes positive or negative."""
from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.normalize import spec as M
from nnfuzz.ops.normalize.numpy import MVN_EPS


def _keepdims(g, keep: bool):
    """keepdims as an attribute, None (omitted) for the default 1 where the draw says so."""
    return None if keep and g.flip("keepdims", "default", "explicit") else int(keep)


def _reduce(g, op_type: str, x: str, axes, keep: bool, since: int = 18):
    """``op_type`` over ``axes`` (drawn positive or negative), the axes as the opset requires."""
    ins, at = g.axes_arg(g.axes(axes, g.rank(x)), since)
    return g.op(op_type, x, *ins, keepdims=_keepdims(g, keep), **at)


@onnx_lowers(M.ReduceSumSquare)
def _sum_square(op, g, x):
    if g.flip("sum_square", "ReduceSum(x * x)", "ReduceSumSquare"):
        return _reduce(g, "ReduceSum", g.op("Mul", x, x, shape=g.shape(x)), [op.axis], op.keepdims, since=13)
    return _reduce(g, "ReduceSumSquare", x, [op.axis], op.keepdims)


@onnx_lowers(M.GlobalLpPool)
def _global_lp_pool(op, g, x):
    p = None if op.p == 2 and g.flip("p", "default", "explicit") else int(op.p)
    how = g.draw("lp_pool", ["GlobalLpPool", "LpPool", "ReduceL"])
    if how == "LpPool":
        return g.op("LpPool", x, kernel_shape=list(g.shape(x)[2:]), p=p)
    if how == "ReduceL":
        return _reduce(g, f"ReduceL{op.p}", x, range(2, g.rank(x)), True)
    return g.op("GlobalLpPool", x, p=p)


@onnx_lowers(M.LpNormalization)
def _lp_normalization(op, g, x):
    if g.flip("lp_norm", "x / ReduceL", "LpNormalization"):
        return g.op("Div", x, _reduce(g, f"ReduceL{op.p}", x, [op.axis], True))
    r = g.rank(x)
    default_axis = op.axis == r - 1 and g.flip("axis", "default", "explicit")
    p = None if op.p == 2 and g.flip("p", "default", "explicit") else int(op.p)
    return g.op("LpNormalization", x, axis=None if default_axis else g.axis(op.axis, r), p=p)


@onnx_lowers(M.MeanVarianceNormalization)
def _mvn(op, g, x):
    """The node only for float32: ONNX's function body of MeanVarianceNormalization adds a float epsilon
    to the deviation, which does not type-check for the other dtypes (onnx's strict shape inference,
    which expands it, rejects the model); for them, always the body with epsilon in x's dtype. The axes
    are always given: with the default left out, onnx 1.23's checker rejects the node at every opset
    (the expanded body's Constant gets no value), though the spec allows it."""
    if g.dtype(x) is not DType.float32 or g.flip("mvn", "function body", "MeanVarianceNormalization"):
        return _mvn_body(op, g, x)
    return g.op("MeanVarianceNormalization", x, axes=g.axes(op.axes, g.rank(x)))


def _mvn_body(op, g, x):
    """ONNX's function body of MeanVarianceNormalization, with x * x for Pow(x, 2) and epsilon in x's
    dtype (the body's float epsilon does not type-check for the other dtypes)."""
    mean = _reduce(g, "ReduceMean", x, op.axes, True)
    mean_sq = _reduce(g, "ReduceMean", g.op("Mul", x, x, shape=g.shape(x)), op.axes, True)
    std = g.op("Sqrt", g.op("Sub", mean_sq, g.op("Mul", mean, mean)))
    return g.op("Div", g.op("Sub", x, mean), g.op("Add", std, g.like(MVN_EPS, x)))
