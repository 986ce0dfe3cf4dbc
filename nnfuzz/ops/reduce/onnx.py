"""ONNX lowerings of the reduce family.

Reductions write ``axes`` as the opset requires (an input from opset 18, from 13 for ReduceSum; an
attribute before), the axis positive or negative, ``keepdims=1`` given or left to its default, and
``noop_with_empty_axes=0`` given or omitted where it exists; a rank-1 input may omit ``axes`` (all
axes); one without keepdims may keep the dim and Squeeze it. ReduceL1, ReduceL2 and LogSumExp may be composed (ReduceSum(Abs), Sqrt(ReduceSumSquare), the
max-shifted log-sum-exp), Softmax and LogSoftmax too; compositions of float16/bfloat16 run in
float32 between two Casts (``opmath``), as torch's CPU kernels accumulate those types in float32.
Attributes equal to their default are given or omitted (drawn, ``attrs``).
"""
from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.compose import attrs, has, opmath, spell
from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.reduce import spec as R

AXES_INPUT_SINCE = 18  # ReduceX(data, axes) from opset 18; ReduceSum already from 13


def kept_then_squeezed(g, reduced, axes, rank):
    """A reduction without keepdims written as one with keepdims (``reduced(True)``) followed by a
    Squeeze of ``axes`` (drawn), else ``reduced(False)``."""
    if not g.flip("squeeze", "keepdims+Squeeze", "keepdims=0"):
        return reduced(False)
    return g.op("Squeeze", reduced(True), g.ints(g.axes(axes, rank)))


def reduce(g, op_type, x, axes, keepdims: bool):
    """``op_type`` over ``axes`` (non-negative) of ``x``, in a drawn spelling of its arguments."""
    rank = g.rank(x)
    if not keepdims:
        return kept_then_squeezed(g, lambda keep: _reduce_node(g, op_type, x, axes, keep), axes, rank)
    return _reduce_node(g, op_type, x, axes, True)


def _reduce_node(g, op_type, x, axes, keepdims: bool):
    rank = g.rank(x)
    since = 13 if op_type == "ReduceSum" else AXES_INPUT_SINCE
    if rank == 1 and g.flip("axes", "omitted", "given"):
        return g.op(op_type, x, **attrs(g, op_type, keepdims=int(keepdims)))  # no axes: all, the one axis
    ins, at = g.axes_arg(g.axes(axes, rank), since)
    flags = {"noop_with_empty_axes": 0} if g.opset >= since else {}
    return g.op(op_type, x, *ins, **at, **attrs(g, op_type, keepdims=int(keepdims), **flags))


def _one_node(op_type):
    def lower(op, g, x):
        return reduce(g, op_type, x, [op.axis], op.keepdims)
    return lower


for _cls, _type in {R.ReduceProd: "ReduceProd", R.ReduceMean: "ReduceMean",
                    R.ReduceMax: "ReduceMax", R.ReduceMin: "ReduceMin"}.items():
    onnx_lowers(_cls)(_one_node(_type))

@onnx_lowers(R.ReduceSum)
def _sum(op, g, x):
    """ReduceSum; an input type it lacks (8/16-bit integers) is summed in int32 or int64 (drawn) and
    cast back: ONNX's Cast between integers keeps the low bits (two's complement), so the sum wraps as
    torch's does."""
    if has(g, "ReduceSum", g.dtype(x)):
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
    """sqrt(sum(x^2)): ReduceL2, or Sqrt(ReduceSumSquare(x)) (ONNX's definition of ReduceL2), in float32
    for float16/bfloat16 (``opmath``): the sum of squares overflows float16 where the norm does not
    (float16 values near 200 sum to squares past 65504), and a system computing the written model gives
    inf there (ONNX's reference evaluator too)."""
    return spell(g, "L2", {
        "ReduceL2": lambda: reduce(g, "ReduceL2", x, [op.axis], op.keepdims),
        "Sqrt(ReduceSumSquare)": lambda: opmath(g, x, lambda v: g.op("Sqrt", reduce(g, "ReduceSumSquare", v, [op.axis],
                                                                                     op.keepdims)))})


@onnx_lowers(R.LogSumExp)
def _log_sum_exp(op, g, x):
    """ReduceLogSumExp, or composed as torch computes it: m + log(sum(exp(x - m))) with m the max
    (the naive log(sum(exp(x))) overflows where torch does not)."""
    def shifted(v):
        m = reduce(g, "ReduceMax", v, [op.axis], True)
        e = g.op("Exp", g.op("Sub", v, m), shape=g.shape(v))
        s = reduce(g, "ReduceSum", e, [op.axis], op.keepdims)
        return g.op("Add", reduce(g, "ReduceMax", v, [op.axis], op.keepdims), g.op("Log", s))
    return spell(g, "LogSumExp", {
        "ReduceLogSumExp": lambda: reduce(g, "ReduceLogSumExp", x, [op.axis], op.keepdims),
        "max-shifted": lambda: opmath(g, x, shifted)})


def _arg(op_type):
    """ArgMax/ArgMin keep the first extreme index (select_last_index=0, given or default)."""
    def node(g, x, axis, keepdims):
        return g.op(op_type, x, **attrs(g, op_type, axis=g.axis(axis, g.rank(x)), keepdims=int(keepdims),
                                          select_last_index=0))

    def lower(op, g, x):
        if op.keepdims:
            return node(g, x, op.axis, True)
        return kept_then_squeezed(g, lambda keep: node(g, x, op.axis, keep), [op.axis], g.rank(x))
    return lower


onnx_lowers(R.ArgMax)(_arg("ArgMax"))
onnx_lowers(R.ArgMin)(_arg("ArgMin"))


def _softmax_axis(g, op_type, axis, rank):
    """Softmax's axis attribute (one axis from opset 13), omitted or not when it is the default -1."""
    return attrs(g, op_type, axis=g.axis(axis, rank))


def _shifted_exp(g, v, axis):
    """(v - max(v), exp(v - max(v)), sum of that exp) along ``axis``, kept as a dim of 1."""
    d = g.op("Sub", v, reduce(g, "ReduceMax", v, [axis], True), shape=g.shape(v))
    e = g.op("Exp", d, shape=g.shape(v))
    return d, e, reduce(g, "ReduceSum", e, [axis], True)


@onnx_lowers(R.Softmax)
def _softmax(op, g, x):
    """Softmax, or composed: exp(x - max) / sum(exp(x - max))."""
    def composed(v):
        _, e, s = _shifted_exp(g, v, op.axis)
        return g.op("Div", e, s)
    return spell(g, "Softmax", {"Softmax": lambda: g.op("Softmax", x, **_softmax_axis(g, "Softmax", op.axis, g.rank(x))),
                                "composed": lambda: opmath(g, x, composed)})


@onnx_lowers(R.LogSoftmax)
def _log_softmax(op, g, x):
    """LogSoftmax, or composed: (x - max) - log(sum(exp(x - max)))."""
    def composed(v):
        d, _, s = _shifted_exp(g, v, op.axis)
        return g.op("Sub", d, g.op("Log", s))
    return spell(g, "LogSoftmax", {
        "LogSoftmax": lambda: g.op("LogSoftmax", x, **_softmax_axis(g, "LogSoftmax", op.axis, g.rank(x))),
        "composed": lambda: opmath(g, x, composed)})


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
        return flip(g.op("CumSum", flip(x), index, shape=g.shape(x), **attrs(g, "CumSum", exclusive=0, reverse=1)))
    return g.op("CumSum", x, index, **attrs(g, "CumSum", exclusive=0, reverse=0))
