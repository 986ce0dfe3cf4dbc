"""ONNX lowerings of the reduce family.

Reductions write ``axes`` as the opset requires (an input from opset 18, from 13 for ReduceSum; an
attribute before), the axis positive or negative, ``keepdims=1`` given or left to its default, and
``noop_with_empty_axes=0`` given or omitted where it exists; a rank-1 input may omit ``axes`` (all
axes). ReduceL1, ReduceL2 and LogSumExp may be composed (ReduceSum(Abs), Sqrt(ReduceSumSquare), the
max-shifted log-sum-exp), Softmax and LogSoftmax too; compositions of float16/bfloat16 run in
float32 between two Casts, as torch's CPU kernels accumulate those types in float32.
"""
from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.reduce import spec as R

AXES_INPUT_SINCE = 18  # ReduceX(data, axes) from opset 18; ReduceSum already from 13
HALF = (DType.float16, DType.bfloat16)


def spell(g, key, options):
    """Run the drawn one of ``options`` ({label: thunk}; the first label is canonical)."""
    return options[g.draw(key, list(options))]()


def in_float32(g, x, compose):
    """``compose(g, x)`` computed in float32 when ``x`` is float16/bfloat16 (cast back after), as
    is otherwise."""
    dt = g.dtype(x)
    if dt not in HALF:
        return compose(g, x)
    return g.cast(compose(g, g.cast(x, DType.float32)), dt)


def reduce(g, op_type, x, axes, keepdims: bool):
    """``op_type`` over ``axes`` (non-negative) of ``x``, in a drawn spelling of its arguments."""
    rank = g.rank(x)
    since = 13 if op_type == "ReduceSum" else AXES_INPUT_SINCE
    attrs = {"keepdims": 1 if g.flip("keepdims", "given", "default") else None} if keepdims else {"keepdims": 0}
    if rank == 1 and g.flip("axes", "omitted", "given"):
        return g.op(op_type, x, **attrs)  # no axes: all of them, the one axis
    ins, at = g.axes_arg(g.axes(axes, rank), since)
    if g.opset >= since and g.flip("noop_with_empty_axes", "given", "default"):
        at["noop_with_empty_axes"] = 0
    return g.op(op_type, x, *ins, **at, **attrs)


def _one_node(op_type):
    def lower(op, g, x):
        return reduce(g, op_type, x, [op.axis], op.keepdims)
    return lower


for _cls, _type in {R.ReduceProd: "ReduceProd", R.ReduceMean: "ReduceMean",
                    R.ReduceMax: "ReduceMax", R.ReduceMin: "ReduceMin"}.items():
    onnx_lowers(_cls)(_one_node(_type))

NARROW_INTS = (DType.int8, DType.int16, DType.uint8)  # ONNX ReduceSum has no kernel type for them


@onnx_lowers(R.ReduceSum)
def _sum(op, g, x):
    """ReduceSum; an 8/16-bit integer input is summed in int32 or int64 (drawn) and cast back: ONNX's
    Cast between integers keeps the low bits (two's complement), so the sum wraps as torch's does."""
    if g.dtype(x) not in NARROW_INTS:
        return reduce(g, "ReduceSum", x, [op.axis], op.keepdims)
    wide = g.cast(x, g.draw("accumulator", [DType.int32, DType.int64]))
    return g.cast(reduce(g, "ReduceSum", wide, [op.axis], op.keepdims), g.dtype(x))


@onnx_lowers(R.ReduceL1)
def _l1(op, g, x):
    """sum(|x|): ReduceL1, or ReduceSum(Abs(x))."""
    return spell(g, "L1", {"ReduceL1": lambda: reduce(g, "ReduceL1", x, [op.axis], op.keepdims),
                           "ReduceSum(Abs)": lambda: reduce(g, "ReduceSum", g.op("Abs", x, shape=g.shape(x)), [op.axis],
                                                             op.keepdims)})


@onnx_lowers(R.ReduceL2)
def _l2(op, g, x):
    """sqrt(sum(x^2)): ReduceL2, or Sqrt(ReduceSumSquare(x)) (ONNX's definition of ReduceL2)."""
    return spell(g, "L2", {
        "ReduceL2": lambda: reduce(g, "ReduceL2", x, [op.axis], op.keepdims),
        "Sqrt(ReduceSumSquare)": lambda: g.op("Sqrt", reduce(g, "ReduceSumSquare", x, [op.axis], op.keepdims))})


@onnx_lowers(R.LogSumExp)
def _log_sum_exp(op, g, x):
    """ReduceLogSumExp, or composed as torch computes it: m + log(sum(exp(x - m))) with m the max
    (the naive log(sum(exp(x))) overflows where torch does not)."""
    def shifted(g, v):
        m = reduce(g, "ReduceMax", v, [op.axis], True)
        e = g.op("Exp", g.op("Sub", v, m), shape=g.shape(v))
        s = reduce(g, "ReduceSum", e, [op.axis], op.keepdims)
        return g.op("Add", reduce(g, "ReduceMax", v, [op.axis], op.keepdims), g.op("Log", s))
    return spell(g, "LogSumExp", {
        "ReduceLogSumExp": lambda: reduce(g, "ReduceLogSumExp", x, [op.axis], op.keepdims),
        "max-shifted": lambda: in_float32(g, x, shifted)})


def _arg(op_type):
    """ArgMax/ArgMin keep the first extreme index (select_last_index=0, given or default)."""
    def lower(op, g, x):
        attrs = {"axis": g.axis(op.axis, g.rank(x)), "keepdims": 0 if not op.keepdims else
                 (1 if g.flip("keepdims", "given", "default") else None)}
        if g.flip("select_last_index", "given", "default"):
            attrs["select_last_index"] = 0
        return g.op(op_type, x, **attrs)
    return lower


onnx_lowers(R.ArgMax)(_arg("ArgMax"))
onnx_lowers(R.ArgMin)(_arg("ArgMin"))


def _softmax_axis(g, axis, rank):
    """Softmax's axis attribute (one axis from opset 13): omitted when it is the last (the default)."""
    if axis == rank - 1 and g.flip("axis_attr", "default", "given"):
        return None
    return g.axis(axis, rank)


def _shifted_exp(g, v, axis):
    """(v - max(v), exp(v - max(v)), sum of that exp) along ``axis``, kept as a dim of 1."""
    d = g.op("Sub", v, reduce(g, "ReduceMax", v, [axis], True), shape=g.shape(v))
    e = g.op("Exp", d, shape=g.shape(v))
    return d, e, reduce(g, "ReduceSum", e, [axis], True)


@onnx_lowers(R.Softmax)
def _softmax(op, g, x):
    """Softmax, or composed: exp(x - max) / sum(exp(x - max))."""
    def composed(g, v):
        _, e, s = _shifted_exp(g, v, op.axis)
        return g.op("Div", e, s)
    return spell(g, "Softmax", {"Softmax": lambda: g.op("Softmax", x, axis=_softmax_axis(g, op.axis, g.rank(x))),
                                "composed": lambda: in_float32(g, x, composed)})


@onnx_lowers(R.LogSoftmax)
def _log_softmax(op, g, x):
    """LogSoftmax, or composed: (x - max) - log(sum(exp(x - max)))."""
    def composed(g, v):
        d, _, s = _shifted_exp(g, v, op.axis)
        return g.op("Sub", d, g.op("Log", s))
    return spell(g, "LogSoftmax", {
        "LogSoftmax": lambda: g.op("LogSoftmax", x, axis=_softmax_axis(g, op.axis, g.rank(x))),
        "composed": lambda: in_float32(g, x, composed)})


@onnx_lowers(R.CumSum)
def _cumsum(op, g, x):
    """CumSum(x, axis) with the axis a 0-d int64 or int32 tensor and ``exclusive``/``reverse`` 0 given
    or default; or as reversed(CumSum(reversed(x), reverse=1)), reversing by a step -1 Slice (the
    same additions in the same order)."""
    rank = g.rank(x)
    axis = g.axis(op.axis, rank)
    index = g.scalar(axis, g.draw("axis_dtype", [DType.int64, DType.int32]))
    if g.flip("form", "reverse of reversed", "forward"):
        flip = lambda v: g.op("Slice", v, g.ints([-1]), g.ints([-2 ** 63]), g.ints([axis]), g.ints([-1]),
                              shape=g.shape(x))  # noqa: E731
        return flip(g.op("CumSum", flip(x), index, reverse=1, shape=g.shape(x)))
    flags = {k: 0 for k in ("exclusive", "reverse") if g.flip(k, "given", "default")}
    return g.op("CumSum", x, index, **flags)
